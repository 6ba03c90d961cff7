import { Navigate, Route, Router } from "@solidjs/router";
import { type JSX, lazy, Show } from "solid-js";
import NotFound from "../pages/NotFound";
import Sessions from "../pages/Sessions";
import SignIn from "../pages/SignIn";
import { type AppState, AppProvider, useApp } from "./context";
import { Shell } from "./Shell";

// The first page paints from the main chunk; the others load when first visited.
const SessionView = lazy(() => import("../pages/SessionView"));
const Inbox = lazy(() => import("../pages/Inbox"));
const Audit = lazy(() => import("../pages/Audit"));
const SandboxSettings = lazy(() => import("../pages/settings/Sandbox"));
const ModelSettings = lazy(() => import("../pages/settings/Models"));
const ConnectorSettings = lazy(() => import("../pages/settings/Connectors"));

export function App(props: { state: AppState }): JSX.Element {
  return (
    <AppProvider state={props.state}>
      <Gate />
    </AppProvider>
  );
}

/** Signed in: the shell and its pages. Otherwise: the sign-in form. */
function Gate(): JSX.Element {
  const app = useApp();
  return (
    <Show when={app.token()} fallback={<SignIn />}>
      <Router root={Shell}>
        <Route path="/" component={() => <Navigate href="/sessions" />} />
        <Route path="/sessions" component={Sessions} />
        <Route path="/sessions/:id" component={SessionView} />
        <Route path="/inbox" component={Inbox} />
        <Route path="/audit" component={Audit} />
        <Route path="/settings" component={() => <Navigate href="/settings/sandbox" />} />
        <Route path="/settings/sandbox" component={SandboxSettings} />
        <Route path="/settings/models" component={ModelSettings} />
        <Route path="/settings/connectors" component={ConnectorSettings} />
        <Route path="*" component={NotFound} />
      </Router>
    </Show>
  );
}
