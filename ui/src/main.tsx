import "./styles/tokens.css";
import "./styles/base.css";
import "./styles/shell.css";
import "./styles/components.css";
import { render } from "solid-js/web";
import { App } from "./app/App";
import { createBrowserAppState } from "./app/context";

const root = document.getElementById("root");
if (!root) {
  throw new Error("index.html has no #root element");
}
render(() => <App state={createBrowserAppState()} />, root);
