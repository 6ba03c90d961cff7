import { createMemo, type JSX, type Resource, Match, Show, Switch } from "solid-js";
import { ApiError } from "../api/errors";
import { Icon } from "./Icon";

/** A region whose content is on its way. Announced politely to screen readers. */
export function Loading(props: { label?: string }): JSX.Element {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      <span>{props.label ?? "Loading…"}</span>
    </div>
  );
}

/** What went wrong with the user's last action, in place and announced; nothing when `text` is empty. */
export function ProblemNotice(props: { text: string | null | undefined }): JSX.Element {
  return (
    <Show when={props.text}>
      {(text) => (
        <p class="notice notice-danger" role="alert">
          <Icon name="alert" />
          <span>{text()}</span>
        </p>
      )}
    </Show>
  );
}

/** Nothing to show, said plainly, with what the user can do about it. */
export function Empty(props: {
  title: string;
  children?: JSX.Element;
  action?: JSX.Element;
}): JSX.Element {
  return (
    <div class="state state-empty">
      <Icon name="empty" size={28} class="state-icon" />
      <p class="state-title">{props.title}</p>
      <Show when={props.children}>
        <div class="state-detail">{props.children}</div>
      </Show>
      <Show when={props.action}>
        <div class="state-action">{props.action}</div>
      </Show>
    </div>
  );
}

/**
 * A failure shown where the content would have been, with the server's own message and code,
 * and a retry when one is given.
 */
export function ErrorState(props: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}): JSX.Element {
  const detail = () => describeError(props.error);
  return (
    <div class="state state-error" role="alert">
      <Icon name="alert" size={20} class="state-icon" />
      <div class="state-body">
        <p class="state-title">{props.title ?? "This could not be loaded"}</p>
        <p class="state-detail">{detail().message}</p>
        <Show when={detail().code}>
          {(code) => <p class="state-code">Error code: {code()}</p>}
        </Show>
      </div>
      <Show when={props.onRetry}>
        {(retry) => (
          <button type="button" class="button" onClick={() => {
              retry()();
            }}
          >
            <Icon name="refresh" />
            Try again
          </button>
        )}
      </Show>
    </div>
  );
}

export function describeError(error: unknown): { message: string; code: string | null } {
  if (error instanceof ApiError) {
    return { message: error.message, code: error.code };
  }
  if (error instanceof Error) {
    return { message: error.message, code: null };
  }
  return { message: String(error), code: null };
}

/**
 * The one way pages show a resource: loading, then its error in place, an empty state when
 * `isEmpty` says so, or the content.
 */
export function AsyncView<T>(props: {
  resource: Resource<T>;
  isEmpty?: (value: T) => boolean;
  empty?: JSX.Element;
  loadingLabel?: string;
  errorTitle?: string;
  onRetry?: () => void;
  children: (value: T) => JSX.Element;
}): JSX.Element {
  // A memo that keeps its box while the value is the same one: a new box re-renders the
  // content, and the state's steps (ready → refreshing → ready) alone must not — an audit page
  // was built twice per page turn, a session list twice per refresh.
  const ready = createMemo(
    (): { value: T } | undefined => {
      if (props.resource.state !== "ready" && props.resource.state !== "refreshing") {
        return undefined;
      }
      return { value: props.resource.latest };
    },
    undefined,
    { equals: (a, b) => (a === undefined ? b === undefined : b !== undefined && a.value === b.value) },
  );
  return (
    <Switch>
      <Match when={props.resource.state === "errored"}>
        <ErrorState
          error={props.resource.error as unknown}
          {...(props.errorTitle === undefined ? {} : { title: props.errorTitle })}
          {...(props.onRetry === undefined ? {} : { onRetry: props.onRetry })}
        />
      </Match>
      <Match when={ready()}>
        {(box) => (
          <Show when={!(props.isEmpty?.(box().value) ?? false)} fallback={props.empty}>
            {props.children(box().value)}
          </Show>
        )}
      </Match>
      <Match when={true}>
        <Loading {...(props.loadingLabel === undefined ? {} : { label: props.loadingLabel })} />
      </Match>
    </Switch>
  );
}
