// Author mode only (helm dev --app): the app's console lines as a browser's console shows
// them. The engine reports a console call as String() of each argument ("[object Object]");
// this wraps the console of each document so objects read as JSON, errors as their stack,
// and a line stays bounded. It runs in the app's own world, changes nothing but what the
// console prints, and is never added outside author mode.
(() => {
  "use strict";
  const LIMIT = 2000;
  const named = (f) => `ƒ ${f.name || "anonymous"}()`;
  const replacer = () => {
    const seen = new WeakSet();
    return (_key, value) => {
      if (typeof value === "bigint") return `${value}n`;
      if (typeof value === "function") return named(value);
      if (typeof value === "symbol") return String(value);
      if (value === undefined) return "undefined";
      if (typeof value === "object" && value !== null) {
        if (seen.has(value)) return "[Circular]";
        seen.add(value);
        if (value instanceof Map) return { "Map": Object.fromEntries(value) };
        if (value instanceof Set) return { "Set": [...value] };
      }
      return value;
    };
  };
  const shown = (value) => {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
    if (typeof value === "function") return named(value);
    if (value === null || typeof value !== "object") return String(value);
    try {
      const text = JSON.stringify(value, replacer());
      return text === undefined ? String(value) : text;
    } catch (_err) {
      return Object.prototype.toString.call(value);
    }
  };
  const bounded = (line) => (line.length <= LIMIT ? line : `${line.slice(0, LIMIT - 1)}…`);
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const original = console[level];
    if (typeof original !== "function") continue;
    console[level] = function (...args) {
      return original.call(this, bounded(args.map(shown).join(" ")));
    };
  }
})();
