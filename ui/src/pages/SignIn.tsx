import { createSignal, type JSX, Show } from "solid-js";
import { useApp } from "../app/context";
import { Icon } from "../components/Icon";
import { Mark } from "../components/Mark";

/**
 * Asks for the access token when none is stored (or the server refused the stored one). The
 * address `paddock up` prints carries the token in its fragment and signs in by itself; this
 * form is for the bookmark opened without it.
 */
export default function SignIn(): JSX.Element {
  const app = useApp();
  const [value, setValue] = createSignal("");
  const [problem, setProblem] = createSignal<string | null>(null);
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const token = value().trim();
    if (!token) {
      setProblem("Paste the access token first.");
      return;
    }
    app.signIn(token);
  };
  return (
    <main class="sign-in" id="main">
      <form class="sign-in-card" onSubmit={submit} noValidate>
        <div class="sign-in-brand">
          <Mark size={36} />
          <h1>Sign in to Paddock</h1>
        </div>
        <p class="sign-in-text">
          Open the address that <code>paddock up</code> prints when it starts: it signs you in.
          Or paste the access token from the token file it names.
        </p>
        <Show when={app.refusal()}>
          {(refusal) => (
            <div class="notice notice-danger" role="alert">
              <Icon name="alert" />
              <span>The server refused the stored token: {refusal().message}</span>
            </div>
          )}
        </Show>
        <label class="field">
          <span class="field-label">Access token</span>
          <input
            class="input"
            type="password"
            name="token"
            autocomplete="off"
            spellcheck={false}
            value={value()}
            aria-invalid={problem() ? "true" : undefined}
            aria-describedby={problem() ? "token-problem" : undefined}
            onInput={(event) => {
              setValue(event.currentTarget.value);
              setProblem(null);
            }}
          />
        </label>
        <Show when={problem()}>
          {(text) => (
            <p class="field-error" id="token-problem">
              {text()}
            </p>
          )}
        </Show>
        <button type="submit" class="button button-primary">
          <Icon name="key" />
          Sign in
        </button>
      </form>
    </main>
  );
}
