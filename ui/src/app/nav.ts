import type { IconName } from "../components/Icon";

/** The navigation, in order. Settings pages sit under their own heading. */
export interface NavEntry {
  href: string;
  label: string;
  icon: IconName;
  /** Shows the pending-approvals count beside the entry. */
  showsInboxCount?: boolean;
}

export const MAIN_NAV: readonly NavEntry[] = [
  { href: "/sessions", label: "Sessions", icon: "sessions" },
  { href: "/inbox", label: "Inbox", icon: "inbox", showsInboxCount: true },
  { href: "/audit", label: "Audit trail", icon: "audit" },
];

export const SETTINGS_NAV: readonly NavEntry[] = [
  { href: "/settings/sandbox", label: "Sandbox", icon: "sandbox" },
  { href: "/settings/models", label: "Models", icon: "models" },
  { href: "/settings/connectors", label: "Connectors", icon: "plug" },
];
