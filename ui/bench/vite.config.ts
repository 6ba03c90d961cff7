import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import solid from "vite-plugin-solid";

// The live-output benchmark's page: the UI's own LiveOutput component, built for production
// like the app (never part of ui/dist).
export default defineConfig({
  root: fileURLToPath(new URL("./live-output", import.meta.url)),
  base: "./",
  plugins: [solid()],
  resolve: {
    alias: { "@server": fileURLToPath(new URL("../../crates/paddock-server/bindings", import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL("./dist", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    assetsInlineLimit: 0,
  },
  logLevel: "warn",
});
