// The whole built UI, gzipped file by file (as a server compresses it), against its budget.
// Run after `vite build` by `npm run build`.
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET_BYTES = 300 * 1024;
const dist = fileURLToPath(new URL("../dist", import.meta.url));

async function files(dir) {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
    ),
  );
  return nested.flat();
}

const sizes = [];
for (const file of await files(dist)) {
  const body = await readFile(file);
  sizes.push({ file: relative(dist, file), raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
}
const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(`ui/dist: ${sizes.length} files, ${kb(total)} gzipped (budget ${kb(BUDGET_BYTES)})`);
if (total > BUDGET_BYTES) {
  for (const s of sizes.sort((a, b) => b.gzip - a.gzip).slice(0, 10)) {
    console.log(`  ${kb(s.gzip).padStart(9)}  ${s.file}`);
  }
  console.error(`the UI is over its size budget by ${kb(total - BUDGET_BYTES)}`);
  process.exit(1);
}
