import { type JSX, Show } from "solid-js";

export function PageHeader(props: {
  title: string;
  description?: string;
  actions?: JSX.Element;
}): JSX.Element {
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        <Show when={props.description}>
          <p class="page-description">{props.description}</p>
        </Show>
      </div>
      <Show when={props.actions}>
        <div class="page-actions">{props.actions}</div>
      </Show>
    </header>
  );
}
