import "./styles/tokens.css";
import "./styles/base.css";
import "./styles/shell.css";
import "./styles/components.css";
import "./styles/layout.css";
import "./styles/forms.css";
import "./styles/pages/session.css";
import "./styles/pages/inbox.css";
import "./styles/pages/settings.css";
import "./styles/pages/connectors.css";
import "./styles/pages/audit.css";
import { render } from "solid-js/web";
import { App } from "./app/App";
import { findServer } from "./app/connection";
import { createBrowserAppState, createDesktopAppState } from "./app/context";
import { DesktopProblem } from "./pages/DesktopProblem";

const root = document.getElementById("root");
if (!root) {
  throw new Error("index.html has no #root element");
}
const where = await findServer();
render(() => {
  switch (where.kind) {
    case "browser":
      return <App state={createBrowserAppState(where.baseUrl)} />;
    case "desktop":
      return <App state={createDesktopAppState(where.connection)} />;
    case "desktop-failed":
      return <DesktopProblem message={where.message} />;
  }
}, root);
