/** Formatting shared by every page: times, durations, sizes, ids. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "5 min ago", "3 h ago", "2 days ago", or the date past a week. */
export function relativeTime(ms: number, now: number = Date.now()): string {
  const ago = now - ms;
  if (ago < 45_000) {
    return "just now";
  }
  if (ago < HOUR) {
    return `${Math.max(1, Math.round(ago / MINUTE))} min ago`;
  }
  if (ago < DAY) {
    return `${Math.round(ago / HOUR)} h ago`;
  }
  if (ago < 7 * DAY) {
    const days = Math.round(ago / DAY);
    return days === 1 ? "yesterday" : `${days} days ago`;
  }
  return formatter("date", { year: "numeric", month: "short", day: "numeric" }).format(ms);
}

/** Date and time to the second, in the user's locale. */
export function dateTime(ms: number): string {
  return formatter("dateTime", {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).format(ms);
}

/** Time of day to the second. */
export function clockTime(ms: number): string {
  return formatter("clock", { hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(ms);
}

/**
 * One `Intl.DateTimeFormat` per format, made on first use: `toLocaleString` with options
 * builds a new one on every call (about half a millisecond each), which made formatting the
 * times of a 200-row audit page cost more than rendering it.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(name: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let format = formatters.get(name);
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, options);
    formatters.set(name, format);
  }
  return format;
}

/** "240 ms", "3.4 s", "2 min 5 s". */
export function duration(ms: number): string {
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < MINUTE) {
    return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  }
  const minutes = Math.floor(ms / MINUTE);
  const seconds = Math.round((ms % MINUTE) / 1000);
  return `${minutes} min ${seconds} s`;
}

/** "512 B", "1.5 KB", "10.0 MB". */
export function bytes(count: number): string {
  if (count < 1024) {
    return `${count} B`;
  }
  if (count < 1024 * 1024) {
    return `${(count / 1024).toFixed(1)} KB`;
  }
  return `${(count / (1024 * 1024)).toFixed(1)} MB`;
}

/** The first 8 characters of an id, for tables (the full id is in a title). */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** The last part of a path, for chips (the full path is in a title). */
export function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const slash = trimmed.lastIndexOf("/");
  return slash === -1 || trimmed === "" ? path : trimmed.slice(slash + 1) || "/";
}

/** JSON for people: two-space indents. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
