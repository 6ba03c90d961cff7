// A small W3C WebDriver client for tauri-driver. It uses Node's fetch, which keeps one
// connection alive across commands: tauri-driver 2.1 drops answers to clients that close the
// connection after every command.

export class WebDriver {
  constructor(baseUrl) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.sessionId = null;
  }

  async command(method, path, body) {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: answer is not JSON (${response.status}): ${text.slice(0, 300)}`);
    }
    if (!response.ok || parsed?.value?.error) {
      const { error, message } = parsed?.value ?? {};
      throw new Error(`${method} ${path}: ${error ?? response.status}: ${message ?? text.slice(0, 300)}`);
    }
    return parsed.value;
  }

  async startApp(application) {
    const value = await this.command("POST", "/session", {
      capabilities: {
        alwaysMatch: { browserName: "wry", "tauri:options": { application } },
      },
    });
    this.sessionId = value.sessionId;
    return value;
  }

  session(path) {
    if (!this.sessionId) throw new Error("no WebDriver session");
    return `/session/${this.sessionId}${path}`;
  }

  title() {
    return this.command("GET", this.session("/title"));
  }

  execute(script, args = []) {
    return this.command("POST", this.session("/execute/sync"), { script, args });
  }

  /** Resolves once the page has painted twice, so a screenshot shows the current DOM. */
  afterPaint() {
    return this.command("POST", this.session("/execute/async"), {
      script:
        "const done = arguments[arguments.length - 1];" +
        "requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
      args: [],
    });
  }

  async find(css) {
    const value = await this.command("POST", this.session("/element"), {
      using: "css selector",
      value: css,
    });
    return Object.values(value)[0];
  }

  click(element) {
    return this.command("POST", this.session(`/element/${element}/click`), {});
  }

  type(element, text) {
    return this.command("POST", this.session(`/element/${element}/value`), { text });
  }

  /** The PNG of the window, as bytes. */
  async screenshot() {
    return Buffer.from(await this.command("GET", this.session("/screenshot")), "base64");
  }

  /**
   * Polls `probe` until it returns a value other than `undefined`, for at most `limitMs`; the
   * last failure is in the error. A wait for the app, not a measurement of it.
   */
  async waitFor(what, probe, limitMs = 20_000) {
    const deadline = Date.now() + limitMs;
    let last;
    for (;;) {
      try {
        const value = await probe();
        if (value !== undefined) return value;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) {
        throw new Error(`gave up waiting for ${what}${last ? `: ${last.message}` : ""}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async quit() {
    if (!this.sessionId) return;
    const path = `/session/${this.sessionId}`;
    this.sessionId = null;
    await this.command("DELETE", path);
  }
}
