import { A } from "@solidjs/router";
import { For, type JSX, Show } from "solid-js";
import { CountBadge } from "../components/Badge";
import { DirectModeWarning } from "../components/DirectModeWarning";
import { Icon, type IconName } from "../components/Icon";
import { Mark } from "../components/Mark";
import { useApp, useLiveMachineState } from "./context";
import { MAIN_NAV, type NavEntry, SETTINGS_NAV } from "./nav";
import { THEME_CHOICES, type ThemePreference } from "./theme";

const THEME_ICONS: Record<ThemePreference, IconName> = {
  system: "monitor",
  light: "sun",
  dark: "moon",
};

/** The frame around every page: skip link, sidebar navigation, and the page itself. */
export function Shell(props: { children?: JSX.Element }): JSX.Element {
  const app = useApp();
  useLiveMachineState(app);
  return (
    <div class="shell">
      <a class="skip-link" href="#main" onClick={skipToContent}>
        Skip to content
      </a>
      <aside class="sidebar">
        <div class="brand">
          <Mark size={22} />
          <span class="brand-name">Paddock</span>
        </div>
        <nav class="nav" aria-label="Main">
          <NavList entries={MAIN_NAV} />
          <h2 class="nav-heading" id="nav-settings">
            Settings
          </h2>
          <NavList entries={SETTINGS_NAV} labelledBy="nav-settings" />
        </nav>
        <SidebarFooter />
      </aside>
      <main id="main" class="main" tabindex="-1">
        <DirectModeWarning provider={app.provider()} />
        {props.children}
      </main>
    </div>
  );
}

/** Moves focus into the page itself (the router would otherwise treat `#main` as a route). */
function skipToContent(event: MouseEvent): void {
  event.preventDefault();
  document.getElementById("main")?.focus();
}

function NavList(props: { entries: readonly NavEntry[]; labelledBy?: string }): JSX.Element {
  const app = useApp();
  return (
    <ul class="nav-list" aria-labelledby={props.labelledBy}>
      <For each={props.entries}>
        {(entry) => (
          <li>
            <A href={entry.href} class="nav-link" activeClass="active">
              <Icon name={entry.icon} />
              <span class="nav-label">{entry.label}</span>
              {entry.showsInboxCount ? (
                <CountBadge count={app.pending().length} label="pending approvals" />
              ) : null}
            </A>
          </li>
        )}
      </For>
    </ul>
  );
}

function SidebarFooter(): JSX.Element {
  const app = useApp();
  return (
    <div class="sidebar-footer">
      <fieldset class="segmented" aria-label="Theme">
        <legend class="visually-hidden">Theme</legend>
        <For each={THEME_CHOICES}>
          {(choice) => (
            <label class="segment" title={`${choice.label} theme`}>
              <input
                type="radio"
                name="theme"
                value={choice.value}
                checked={app.theme.preference() === choice.value}
                onChange={() => {
                  app.theme.setPreference(choice.value);
                }}
              />
              <Icon name={THEME_ICONS[choice.value]} size={14} />
              <span class="visually-hidden">{choice.label}</span>
            </label>
          )}
        </For>
      </fieldset>
      <Show when={!app.desktop}>
        <button
          type="button"
          class="button button-ghost button-small"
          onClick={() => {
            app.signOut();
          }}
        >
          <Icon name="signOut" size={14} />
          Sign out
        </button>
      </Show>
    </div>
  );
}
