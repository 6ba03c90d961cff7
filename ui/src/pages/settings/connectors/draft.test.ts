import type { ConnectorConfig } from "@server/ConnectorConfig";
import { describe, expect, it } from "vitest";
import { configFrom, connectorFieldProblem, draftFrom, usesToken, withToolRisk } from "./draft";

const TRACKER: ConnectorConfig = {
  name: "tracker",
  transport: "stdio",
  enabled: false,
  command: "/usr/local/bin/tracker-mcp",
  args: ["--readonly", "--project", "paddock"],
  env: { TRACKER_TOKEN: "{secret}", LOG_LEVEL: "warn" },
  risk: { search: "read", "*": "destructive" },
};

describe("draftFrom and configFrom", () => {
  it("give back the entry they were given", () => {
    expect(configFrom(draftFrom(TRACKER))).toEqual({ config: TRACKER });
    const http: ConnectorConfig = {
      name: "docs",
      transport: "streamable-http",
      enabled: true,
      url: "https://mcp.docs.example/mcp",
      headers: { Authorization: "Bearer {secret}" },
    };
    expect(configFrom(draftFrom(http))).toEqual({ config: http });
  });

  it("start a new connector as an enabled stdio server with nothing else set", () => {
    const draft = draftFrom(null);
    expect(draft).toMatchObject({ name: "", transport: "stdio", enabled: true, env: [], everyTool: "" });
    expect(configFrom({ ...draft, name: "notes", command: " notes-mcp " })).toEqual({
      config: { name: "notes", transport: "stdio", enabled: true, command: "notes-mcp" },
    });
  });

  it("send only the fields of the chosen transport", () => {
    const draft = { ...draftFrom(TRACKER), transport: "streamable-http" as const, url: "http://127.0.0.1:9000/mcp" };
    const built = configFrom(draft);
    expect(built).toEqual({
      config: { name: "tracker", transport: "streamable-http", enabled: false, url: "http://127.0.0.1:9000/mcp", risk: TRACKER.risk },
    });
  });

  it("drop blank rows and trim arguments", () => {
    const draft = {
      ...draftFrom(null),
      name: "x",
      command: "x-mcp",
      args: "  --a \n\n --b\n",
      env: [{ key: "", value: "" }, { key: " A ", value: "1" }],
    };
    expect(configFrom(draft)).toEqual({
      config: { name: "x", transport: "stdio", enabled: true, command: "x-mcp", args: ["--a", "--b"], env: { A: "1" } },
    });
  });

  it("name each problem at its field", () => {
    const built = configFrom({
      ...draftFrom(null),
      name: "Bad_Name",
      env: [{ key: "", value: "orphan" }],
    });
    expect(built).toEqual({
      problems: {
        name: expect.stringContaining("lowercase letters") as unknown,
        command: expect.stringContaining("Name the program") as unknown,
        env: "A variable has a value but no name.",
      },
    });
    for (const name of ["a-", "a--b", "1abc", "abcdefghijklmnopqrstu"]) {
      expect("problems" in configFrom({ ...draftFrom(TRACKER), name }), name).toBe(true);
    }
    const twice = configFrom({ ...draftFrom(TRACKER), env: [{ key: "A", value: "1" }, { key: "A", value: "2" }] });
    expect(twice).toEqual({ problems: { env: "A is given twice." } });
    const noUrl = configFrom({ ...draftFrom(TRACKER), transport: "streamable-http", url: "mcp.example.com" });
    expect(noUrl).toEqual({ problems: { url: "Give the server's http:// or https:// address." } });
  });
});

describe("usesToken", () => {
  it("is true when a variable or header of the chosen transport carries {secret}", () => {
    expect(usesToken(draftFrom(TRACKER))).toBe(true);
    expect(usesToken({ ...draftFrom(TRACKER), env: [{ key: "LOG_LEVEL", value: "warn" }] })).toBe(false);
    expect(usesToken({ ...draftFrom(TRACKER), transport: "streamable-http" })).toBe(false);
  });
});

describe("withToolRisk", () => {
  it("sets, changes and removes one tool's risk, leaving the others", () => {
    expect(withToolRisk(TRACKER, "create_issue", "write").risk).toEqual({ search: "read", "*": "destructive", create_issue: "write" });
    expect(withToolRisk(TRACKER, "search", "destructive").risk).toEqual({ search: "destructive", "*": "destructive" });
    expect(withToolRisk(TRACKER, "search", null).risk).toEqual({ "*": "destructive" });
    const plain = withToolRisk({ name: "a", transport: "stdio", enabled: true, command: "a", risk: { only: "read" } }, "only", null);
    expect("risk" in plain).toBe(false);
  });
});

describe("connectorFieldProblem", () => {
  it("puts the host's refusal at the field it names, with the entry it is about", () => {
    expect(
      connectorFieldProblem(
        "setting `connectors.env.MCP_TEST_TOKEN`: looks like a credential, so its value must come from the key store",
      ),
    ).toEqual({ field: "env", problem: "MCP_TEST_TOKEN looks like a credential, so its value must come from the key store" });
    expect(connectorFieldProblem("setting `connectors[1].url`: is not a URL: relative URL without a base")).toEqual({
      field: "url",
      problem: "url is not a URL: relative URL without a base",
    });
    expect(connectorFieldProblem("setting `token`: is empty")).toEqual({ field: "token", problem: "token is empty" });
  });

  it("leaves any other message to the form as a whole", () => {
    expect(connectorFieldProblem("setting `connectors.enabled`: must be true or false")).toBeNull();
    expect(connectorFieldProblem("setting `(file)`: the config file is not valid TOML")).toBeNull();
    expect(connectorFieldProblem("the body names connector `a` but the path `b`")).toBeNull();
  });
});
