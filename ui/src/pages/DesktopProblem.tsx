import type { JSX } from "solid-js";
import { Icon } from "../components/Icon";
import { Mark } from "../components/Mark";

/** The desktop app could not start Paddock in its process: why, and what to do. */
export function DesktopProblem(props: { message: string }): JSX.Element {
  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <div class="sign-in-brand">
          <Mark size={36} />
          <h1>Paddock could not start</h1>
        </div>
        <div class="notice notice-danger" role="alert">
          <Icon name="alert" />
          <span>{props.message}</span>
        </div>
        <p class="sign-in-text">
          Fix what the message names (often a line of <code>~/.config/paddock/config.toml</code>),
          then reopen the app. <code>paddock machine sandbox status</code> in a terminal checks the
          machine too.
        </p>
      </div>
    </main>
  );
}
