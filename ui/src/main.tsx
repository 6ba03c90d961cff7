import "./styles/tokens.css";
import "./styles/base.css";
import "./styles/shell.css";
import "./styles/components.css";
import "./styles/pages.css";
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
