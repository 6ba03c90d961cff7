import { createEffect, createUniqueId, type JSX, onCleanup, Show } from "solid-js";
import { Icon } from "./Icon";

/**
 * A modal dialog on the native `<dialog>` element: focus moves into it and stays there, Escape
 * closes it, and focus returns where it was. `side` shows it as a drawer at the right edge.
 */
export function Dialog(props: {
  open: boolean;
  title: string;
  description?: string;
  onClose: () => void;
  side?: boolean;
  wide?: boolean;
  children: JSX.Element;
  footer?: JSX.Element;
}): JSX.Element {
  let dialog: HTMLDialogElement | undefined;
  const titleId = createUniqueId();
  createEffect(() => {
    if (!dialog) {
      return;
    }
    if (props.open && !dialog.open) {
      dialog.showModal();
    } else if (!props.open && dialog.open) {
      dialog.close();
    }
  });
  onCleanup(() => {
    if (dialog?.open) {
      dialog.close();
    }
  });
  const classes = () =>
    ["dialog", props.side ? "dialog-side" : "", props.wide ? "dialog-wide" : ""].join(" ").trim();
  return (
    <dialog
      ref={(element) => {
        dialog = element;
      }}
      class={classes()}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop (the dialog element itself, outside its box) closes it.
        if (event.target === dialog) {
          props.onClose();
        }
      }}
    >
      <Show when={props.open}>
        <div class="dialog-box">
          <header class="dialog-header">
            <div>
              <h2 id={titleId}>{props.title}</h2>
              <Show when={props.description}>
                <p class="dialog-description">{props.description}</p>
              </Show>
            </div>
            <button
              type="button"
              class="button button-ghost button-icon"
              aria-label="Close"
              onClick={() => {
                props.onClose();
              }}
            >
              <Icon name="close" />
            </button>
          </header>
          {/* A drawer's body scrolls and may hold only text: it takes focus, so the keyboard can
              scroll it too. */}
          <div
            class="dialog-body"
            tabindex={props.side ? 0 : undefined}
            role={props.side ? "region" : undefined}
            aria-labelledby={props.side ? titleId : undefined}
          >
            {props.children}
          </div>
          <Show when={props.footer}>
            <footer class="dialog-footer">{props.footer}</footer>
          </Show>
        </div>
      </Show>
    </dialog>
  );
}
