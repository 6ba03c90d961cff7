import { fileURLToPath } from "node:url";
import solid from "vite-plugin-solid";
import { defineConfig } from "vitest/config";

// Payload types are generated from the Rust wire crates (ts-rs) and imported through aliases,
// never copied by hand.
const protocolBindings = fileURLToPath(new URL("../crates/protocol/bindings", import.meta.url));

export default defineConfig({
  plugins: [solid()],
  resolve: {
    alias: { "@protocol": protocolBindings },
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
    fs: { allow: [".", protocolBindings] },
  },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
