// A real `paddock up` for the browser end-to-end tests: the `paddock` binary on a fresh
// temporary HOME, the local wall (the real tool-runner inside the real wall), and the
// `fake-model-server` test double (real HTTP, the Anthropic Messages wire) in place of the
// model API, scripted over its stdin.
//
// The binaries come from the environment (`cargo xtask ui e2e` sets all five):
// PADDOCK_BIN, PADDOCK_FAKE_MODEL_SERVER, PADDOCK_TOOL_RUNNER, PADDOCK_WALL, and
// PADDOCK_MCP_TEST_SERVER (test-support's MCP server over stdio, a real rmcp server, configured
// as a connector through the UI).
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const NEEDED = [
  "PADDOCK_BIN",
  "PADDOCK_FAKE_MODEL_SERVER",
  "PADDOCK_TOOL_RUNNER",
  "PADDOCK_WALL",
  "PADDOCK_MCP_TEST_SERVER",
];

/** The name the MCP test server is found by on the PATH of `paddock up`. */
const MCP_COMMAND = "docs-mcp";

/** The model key of the test machine (planted: it must never show in the page). */
export const MODEL_KEY = "sk-ant-PLANTED-e2e-key-0123456789abcdef";

/** The binaries, or an error naming each missing variable. */
export function binaries() {
  const missing = NEEDED.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(
      `the end-to-end tests against paddock up need ${missing.join(", ")} (run them with \`cargo xtask ui e2e\`, which builds and names them)`,
    );
  }
  return Object.fromEntries(NEEDED.map((name) => [name, process.env[name]]));
}

/** Lines of a child's stdout, one promise per wanted line. */
function lineReader(stream) {
  const waiting = [];
  const buffered = [];
  createInterface({ input: stream }).on("line", (line) => {
    const next = waiting.shift();
    if (next) {
      next(line);
    } else {
      buffered.push(line);
    }
  });
  return () =>
    buffered.length > 0 ? Promise.resolve(buffered.shift()) : new Promise((resolve) => waiting.push(resolve));
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The fake model server as a process; `script(reply)` queues the next reply. */
export async function startModel(bin) {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
  const nextLine = lineReader(child.stdout);
  const first = JSON.parse(await withTimeout(nextLine(), 20_000, "the fake model server's address"));
  return {
    anthropicBaseUrl: first.anthropic_base_url,
    async script(reply) {
      child.stdin.write(`${JSON.stringify(reply)}\n`);
      const answer = JSON.parse(await withTimeout(nextLine(), 10_000, "the fake model server's answer"));
      if (answer.error) {
        throw new Error(`the fake model server refused a reply: ${answer.error}`);
      }
    },
    async stop() {
      child.stdin.end();
      const code = await new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve(child.exitCode);
        } else {
          child.on("exit", resolve);
        }
      });
      return code;
    },
  };
}

/**
 * The machine config the test starts with: comments the settings pages must keep. `keyStore`:
 * `env` (the model key from ANTHROPIC_API_KEY) or `file` (an owner-only secrets file in the
 * state folder, where a connector's token typed in the UI is stored too).
 */
export function initialConfig(anthropicBaseUrl, keyStore = "env") {
  return [
    "# Paddock on the end-to-end test machine.",
    "# Comments like this one must survive every change made from the UI.",
    "",
    "[models]",
    'provider = "anthropic"',
    'model = "claude-test"',
    `base_url = "${anthropicBaseUrl}"`,
    `key_store = "${keyStore}"`,
    "",
  ].join("\n");
}

/**
 * Starts the fake model and `paddock up` on a fresh HOME with two folders to grant. Returns
 * the URL, the token, the paths, the model's script function and `stop()`.
 * `prepareHome(home)` runs before `paddock up` starts (the benchmarks seed its state there).
 */
export async function startPaddock({ prepareHome } = {}) {
  const bins = binaries();
  const home = await mkdtemp(join(tmpdir(), "paddock-e2e-home-"));
  const work = join(home, "work");
  const rw = join(work, "project");
  const ro = join(work, "reference");
  await mkdir(rw, { recursive: true });
  await mkdir(ro, { recursive: true });
  await writeFile(join(ro, "README.md"), "Read-only reference.\n");
  const model = await startModel(bins.PADDOCK_FAKE_MODEL_SERVER);
  const configFile = join(home, ".config", "paddock", "config.toml");
  await mkdir(join(home, ".config", "paddock"), { recursive: true });
  await writeFile(configFile, initialConfig(model.anthropicBaseUrl, "file"));
  // The file key store: the model key as `paddock keys set` would leave it (folder 0700,
  // file 0600); a connector token saved from the UI lands beside it.
  const stateDir = join(home, ".local", "state", "paddock");
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await chmod(stateDir, 0o700);
  const secretsFile = join(stateDir, "secrets.toml");
  await writeFile(secretsFile, `[keys]\nanthropic = "${MODEL_KEY}"\n`, { mode: 0o600 });
  // The MCP test server as a program found on PATH, as a user's installed server would be.
  const bin = join(home, "bin");
  await mkdir(bin);
  await symlink(bins.PADDOCK_MCP_TEST_SERVER, join(bin, MCP_COMMAND));
  await prepareHome?.(home);
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    PADDOCK_TOOL_RUNNER: bins.PADDOCK_TOOL_RUNNER,
    PADDOCK_WALL: bins.PADDOCK_WALL,
    RUST_LOG: process.env.RUST_LOG ?? "warn",
  };
  const child = spawn(bins.PADDOCK_BIN, ["up", "--listen", "127.0.0.1:0"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const nextLine = lineReader(child.stdout);
  let url = null;
  const printed = [];
  while (url === null) {
    const line = await withTimeout(nextLine(), 60_000, `paddock up's address (stderr so far: ${stderr})`);
    if (line === undefined) {
      throw new Error(`paddock up exited: ${stderr}`);
    }
    printed.push(line);
    const match = /^Paddock is serving (\S+)/.exec(line);
    if (match) {
      url = match[1];
    }
  }
  // Not a terminal: the address with the token is not printed; the token file is named.
  const tokenLine = await withTimeout(nextLine(), 10_000, "the token file's line");
  const tokenLine2 = await withTimeout(nextLine(), 10_000, "the token file's line");
  printed.push(tokenLine, tokenLine2);
  const tokenFile = join(home, ".local", "state", "paddock", "api-token");
  const token = (await readFile(tokenFile, "utf8")).trim();
  return {
    url,
    token,
    home,
    rw,
    ro,
    configFile,
    secretsFile,
    mcpCommand: MCP_COMMAND,
    printed,
    model,
    stderr: () => stderr,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve();
        } else {
          child.on("exit", resolve);
        }
      });
      const modelExit = await model.stop();
      await rm(home, { recursive: true, force: true });
      return { modelExit };
    },
  };
}
