import { createSignal, type JSX, Show } from "solid-js";
import { useApp } from "../app/context";
import { sendTurn } from "../api/sessions";
import { Icon } from "../components/Icon";
import { describeError } from "../components/states";

/**
 * Where the user writes the next message: Ctrl+Enter or Send; held while a turn runs. A session
 * not running here offers to resume it instead.
 */
export function Composer(props: {
  sessionId: string;
  running: boolean;
  turnRunning: boolean;
  onResume: () => void;
  /** The message was accepted: the view goes to the end to follow the turn. */
  onSent?: () => void;
}): JSX.Element {
  const app = useApp();
  const [text, setText] = createSignal("");
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const send = async () => {
    const message = text().trim();
    if (message === "" || busy()) {
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      await sendTurn(app.api, props.sessionId, message);
      setText("");
      props.onSent?.();
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Show
      when={props.running}
      fallback={
        <div class="composer composer-stored">
          <span>This session is not running here. Resume it to continue the conversation.</span>
          <button type="button" class="button button-primary" onClick={() => { props.onResume(); }}>
            <Icon name="play" size={14} />
            Resume
          </button>
        </div>
      }
    >
      <form
        class="composer"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <label class="visually-hidden" for="composer-text">
          Message to the agent
        </label>
        <textarea
          id="composer-text"
          class="textarea composer-text"
          rows="2"
          placeholder={props.turnRunning ? "The agent is working; you can send the next message when it is done" : "Tell the agent what to do next (Ctrl+Enter sends)"}
          value={text()}
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" class="button button-primary" disabled={busy() || props.turnRunning || text().trim() === ""}>
          <Icon name="send" size={14} />
          Send
        </button>
        <Show when={problem()}>
          {(message) => (
            <p class="field-error composer-problem" role="alert">
              {message()}
            </p>
          )}
        </Show>
      </form>
    </Show>
  );
}
