import type { EnforcementLevel } from "@server/EnforcementLevel";
import type { JSX } from "solid-js";

export type Tone = "ok" | "info" | "warn" | "danger" | "neutral";

export function Badge(props: { tone: Tone; children: JSX.Element; title?: string }): JSX.Element {
  return (
    <span class={`badge badge-${props.tone}`} title={props.title}>
      {props.children}
    </span>
  );
}

const ENFORCEMENT: Record<EnforcementLevel, { label: string; tone: Tone; title: string }> = {
  openshell: {
    label: "OpenShell",
    tone: "info",
    title: "Ran inside an NVIDIA OpenShell sandbox",
  },
  local: {
    label: "Local wall",
    tone: "ok",
    title: "Ran inside Paddock's local wall (namespaces, Landlock, seccomp, allow-list proxy)",
  },
  none: { label: "None", tone: "danger", title: "Ran with no sandbox (direct mode)" },
  host: { label: "Host", tone: "neutral", title: "Ran by Paddock itself on the host" },
};

/** Which wall enforced a session or tool call, as every surface shows it. */
export function EnforcementBadge(props: { level: EnforcementLevel }): JSX.Element {
  const spec = () => ENFORCEMENT[props.level];
  return (
    <Badge tone={spec().tone} title={spec().title}>
      {spec().label}
    </Badge>
  );
}

/** A count beside a navigation entry; hidden at zero. The label is read out with the link. */
export function CountBadge(props: { count: number; label: string }): JSX.Element {
  return (
    <>
      {props.count > 0 ? (
        <span class="count-badge">
          <span aria-hidden="true">{props.count > 99 ? "99+" : props.count}</span>
          <span class="visually-hidden">
            , {props.count} {props.label}
          </span>
        </span>
      ) : null}
    </>
  );
}
