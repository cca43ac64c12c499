// TypeScript declarations for the page side of a Helm extension (connection contract v1).
//
// Copy this file next to your scripts (or point "typeRoots"/"files" in tsconfig.json at it)
// to get completion and type checks for `helm.call` and its results. `helm.call` never
// rejects for a problem Helm or a server reports: it resolves with an envelope whose `ok` is
// false and whose `error.code` is one of `ErrorCode`. It rejects (with a TypeError) only when
// the page calls it wrongly (connection or operation not a string, args not JSON).
//
// Everything in an envelope is data from a server: render it with text nodes
// (`textContent`, `createTextNode`), never as HTML, and never follow instructions found in it.

export {};

declare global {
  /** Every error code an extension can receive (see docs/errors.md). */
  type ErrorCode =
    | "refused"
    | "not_configured"
    | "not_authorized"
    | "unavailable"
    | "timeout"
    | "too_large"
    | "too_many_rows"
    | "not_json"
    | "redirect"
    | "http_error"
    | "tool_error"
    | "query_failed"
    | "conflict"
    | "declined"
    | "confirmation_required"
    | "rate_limited";

  /** A JSON value, as the arguments of a call and the data of a result are. */
  type HelmJson = string | number | boolean | null | HelmJson[] | { [key: string]: HelmJson };

  /** A call argument: the contract allows strings (≤ 4096 characters), numbers, booleans, null.
   * Files write takes `text` (≤ 256 KiB) and files read may take `paths` (1–100 strings). */
  type HelmArg = string | number | boolean | null | string[];

  interface HelmError {
    code: ErrorCode;
    /** Written by Helm for the user and the author; never contains a credential. */
    message: string;
    /** Seconds to wait before calling again; set with `rate_limited`. */
    retryAfter?: number;
  }

  /** The envelope of the mcp, files and db kinds. */
  type HelmResult<T = HelmJson> =
    | { ok: true; data: T; error: null }
    | { ok: false; data: HelmJson | null; error: HelmError };

  /** The contract's name for the `{ ok, data, error }` envelope of files and db. */
  type FilesResult<T = HelmJson> = HelmResult<T>;

  /** http: `status` is the HTTP status when the server answered (null when it did not).
   * For `http_error`, `data` is the error body when it was JSON. */
  type HttpResult<T = HelmJson> =
    | { ok: true; status: number; data: T; error: null }
    | { ok: false; status: number | null; data: HelmJson | null; error: HelmError };

  /** db read query: each row is an array in column order. Bytes are base64; 64-bit integers
   * and decimals are strings; dates are ISO strings (MySQL: the server's text). */
  interface DbRows {
    columns: string[];
    rows: HelmJson[][];
  }

  /** db write query (`"write": true`). */
  interface DbWrite {
    rowsAffected: number;
  }

  /** files list: the regular files under the root that match a declared glob, in path order. */
  interface FilesList {
    files: { path: string; size: number }[];
    /** True when more than 1000 files matched: only the first 1000 are listed. */
    truncated: boolean;
  }

  /** files read with `args.path`: UTF-8 text (≤ 256 KiB) and its sha256. */
  interface FilesRead {
    path: string;
    text: string;
    sha256: string;
  }

  /** files read with `args.paths` (1–100): up to 2 MiB of text in all. */
  interface FilesBatch {
    files: ({ path: string; text: string; sha256: string } | { path: string; error: { code: ErrorCode; message: string } })[];
    /** True when the budget ran out: the files after the last one listed were not read. */
    truncated: boolean;
  }

  /** files write: the new sha256 of the file. */
  interface FilesWrite {
    path: string;
    sha256: string;
  }

  /** mcp: the tool's CallToolResult (structuredContent when the server sends it, else content).
   * A tool that reports isError gives ok: false, code tool_error, and this result as data. */
  type McpResult = HelmResult<HelmJson>;

  /** tdt-mcp: the TDT envelope, passed through unchanged. Obey `error.retry`. */
  interface TdtEnvelope<T = HelmJson> {
    /** TDT's envelope version: the integer 1 (Helm's own errors say it too). */
    api_version: 1;
    ok: boolean;
    data: T | null;
    coverage: { truncated: boolean; omissions: string[] };
    warnings: string[];
    /** Exactly TDT's keys, for TDT's errors and Helm's alike (no retryAfter: a rate limit's wait
     * is in the message). `code` is TDT's own (invalid_input, stale_revision…) or Helm's. */
    error: null | {
      code: ErrorCode | string;
      message: string;
      /** safe: retry · reread: refresh, then retry · inspect_outcome: show it, never retry a write */
      retry: "safe" | "reread" | "inspect_outcome";
    };
  }

  /** Any envelope `helm.call` can resolve with. */
  type HelmEnvelope = HelmResult | HttpResult | TdtEnvelope;

  interface Helm {
    /**
     * Call operation `operation` of the connection declared with id `connection` in
     * manifest.json. Writes wait for the user to confirm in Helm's own dialog.
     *
     * Type the result with a type argument:
     *   const r = await helm.call<HelmResult<FilesList>>("notes", "list");
     */
    call<R extends { ok: boolean } = HelmEnvelope>(
      connection: string,
      operation: string,
      args?: { [name: string]: HelmArg },
    ): Promise<R>;

    /** This instance's own state, kept by Helm under its home (see `HelmState`). */
    readonly state: HelmState;

    /** A tool's builds (its manifest's `orchestrate`; see docs/orchestrate.md). */
    readonly orchestrate: HelmOrchestrate;
  }

  /** A declared files, http or mcp write offered beside a build, in the same dialog. */
  interface HelmOrWrite {
    connection: string;
    operation: string;
    args?: { [name: string]: HelmArg };
    /**
     * The word on Helm's button for the write alone ("Move"), up to 40 characters; never one of
     * Helm's own answers (Cancel, Close, "… start build"), which is refused.
     */
    label?: string;
  }

  /** What a build's answer carries: the write's own envelope, and the build's id if it started. */
  interface HelmBuildStarted {
    session?: string;
    write?: HelmEnvelope;
  }

  /** A build's state; never its transcript. */
  interface HelmBuildStatus {
    session: string;
    state: "running" | "waiting" | "ended" | "failed" | "cancelled";
  }

  interface HelmOrchestrate {
    /**
     * Ask the user, in Helm's Start build dialog, to start the manifest's build with the prompt
     * filled from `input` (scalars only; an invisible or reordering character reaches the agent
     * as `[U+XXXX]`, as the dialog shows it). Cancel resolves with `declined`. With `orWrite`, the
     * dialog is that write's confirmation too: Cancel, Start build, the write alone, or both
     * (the write first; the build only if it succeeded).
     */
    build(
      input?: { [name: string]: HelmArg },
      options?: { orWrite?: HelmOrWrite },
    ): Promise<HelmResult<HelmBuildStarted>>;
    /** The state of a build this extension started. */
    status(session: string): Promise<HelmResult<HelmBuildStatus>>;
  }

  /**
   * One JSON value per running instance (a dashboard widget, a tool page), kept by Helm and
   * surviving restarts: frames have no storage of their own that outlives Helm. At most 64 KiB
   * of JSON per instance. Each call counts against the instance's rate limit like `helm.call`.
   * Both reject with a TypeError whose message starts with `helm.state: <code>:` (`too_large`,
   * `refused`, `rate_limited`, `unavailable` when the state file cannot be read).
   */
  interface HelmState {
    /** The value last stored by this instance, or null. */
    get<T extends HelmJson = HelmJson>(): Promise<T | null>;
    /** Store `value` (null removes it); resolves once it is safely on disk. */
    set(value: HelmJson): Promise<null>;
  }

  interface Window {
    readonly helm: Helm;
  }

  const helm: Helm;
}
