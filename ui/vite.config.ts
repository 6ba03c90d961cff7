import { fileURLToPath } from "node:url";
import solid from "vite-plugin-solid";
import { defineConfig } from "vitest/config";

// Payload types are the API's own, generated from the Rust code (ts-rs, checked by
// `cargo xtask codegen --check`) and imported through an alias, never copied by hand.
const serverBindings = fileURLToPath(new URL("../crates/paddock-server/bindings", import.meta.url));

const devApi = "http://127.0.0.1:8420";

export default defineConfig({
  plugins: [solid()],
  resolve: {
    alias: { "@server": serverBindings },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // Engines of the two hosts: Chromium-class browsers and WebKitGTK 2.4x (the desktop shell).
    // Both have `light-dark()`, `:has()` and `color-mix()` natively.
    cssTarget: ["chrome123", "safari17.5", "firefox120"],
    // Every asset is a file of its own, so the server can give each a strong ETag and cache it.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    fs: { allow: [".", serverBindings] },
    // `npm run dev` against a running `paddock up` on its default address: API calls and
    // event sockets are passed on as if the page came from it (its Host and Origin checks).
    proxy: {
      "/v1": {
        target: devApi,
        ws: true,
        changeOrigin: true,
        headers: { origin: devApi },
      },
    },
  },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
