import type { Page } from "@server/Page";
import type { StoredEvent } from "@server/StoredEvent";
import type { VerifyReport } from "@server/VerifyReport";
import { createResource, createSignal, For, type JSX, Show } from "solid-js";
import { useApp } from "../app/context";
import { type AuditFilters, auditPage, exportAudit, verifyChain } from "../api/audit";
import { listSessions } from "../api/sessions";
import { AuditDetail } from "../audit/AuditDetail";
import { AuditFiltersForm, NO_FILTERS } from "../audit/AuditFilters";
import { createRowWindow, ROW_HEIGHT } from "../audit/rowWindow";
import { summarize } from "../audit/summary";
import { Badge, EnforcementBadge } from "../components/Badge";
import { dateTime, shortId } from "../components/format";
import { Icon } from "../components/Icon";
import { PageHeader } from "../components/PageHeader";
import { AsyncView, describeError, Empty } from "../components/states";

const PAGE_SIZES = [10, 25, 50, 100, 200];

/**
 * The audit trail: every filter the API has, keyset paging (newest first; each page asks for
 * the rows older than the last one shown, so a page costs the same at row 10 or row 1 000 000),
 * a detail drawer, the chain's verification, and exports of what the filters select.
 */
export default function Audit(): JSX.Element {
  const app = useApp();
  const [filters, setFilters] = createSignal<AuditFilters>({ ...NO_FILTERS });
  const [limit, setLimit] = createSignal(50);
  // The cursors of the pages walked so far: [null (the newest), next of page 1, …].
  const [cursors, setCursors] = createSignal<(string | null)[]>([null]);
  const [selected, setSelected] = createSignal<StoredEvent | null>(null);
  const [sessions] = createResource(() => listSessions(app.api));
  const [page, { refetch }] = createResource(
    () => ({ filters: filters(), limit: limit(), cursor: cursors().at(-1) ?? null }),
    (query) => auditPage(app.api, query.filters, query.limit, query.cursor),
  );
  const apply = (next: AuditFilters) => {
    setFilters(next);
    setCursors([null]);
  };
  const pageNumber = () => cursors().length;
  /** The page on screen (reading a failed resource's value throws: none then). */
  const shown = (): Page | undefined => (page.state === "ready" || page.state === "refreshing" ? page.latest : undefined);
  return (
    <>
      <PageHeader
        title="Audit trail"
        description="Every session, tool call, attestation and refused connection, in a hash chain that shows tampering."
        actions={<ExportButtons filters={filters()} />}
      />
      <section class="page-body stack">
        <VerifyPanel />
        <AuditFiltersForm filters={filters()} sessions={sessions.latest ?? []} onApply={apply} />
        <AsyncView
          resource={page}
          loadingLabel="Loading the audit trail…"
          errorTitle="The audit trail could not be read"
          onRetry={() => void refetch()}
          isEmpty={(p) => p.events.length === 0 && pageNumber() === 1}
          empty={<Empty title="No rows match">Change or clear the filters to see more of the trail.</Empty>}
        >
          {(result) => <AuditTable page={result} onOpen={setSelected} />}
        </AsyncView>
        <nav class="pager" aria-label="Pages">
          <label class="field field-inline">
            <span class="field-label">Rows per page</span>
            <select
              class="select select-inline"
              value={limit()}
              onChange={(e) => {
                setLimit(Number(e.currentTarget.value));
                setCursors([null]);
              }}
            >
              <For each={PAGE_SIZES}>{(size) => <option value={size}>{size}</option>}</For>
            </select>
          </label>
          <span class="pager-where" aria-live="polite">
            Page {pageNumber()}
            {shown() && (shown()?.events.length ?? 0) > 0
              ? ` · rows ${shown()?.events.at(-1)?.seq ?? ""}–${shown()?.events[0]?.seq ?? ""}`
              : ""}
          </span>
          <button type="button" class="button" disabled={pageNumber() === 1} onClick={() => setCursors([null])}>
            Newest
          </button>
          <button type="button" class="button" disabled={pageNumber() === 1} onClick={() => setCursors(cursors().slice(0, -1))}>
            Newer
          </button>
          <button
            type="button"
            class="button"
            // While a page loads, the one shown is the last: its cursor would ask for it again.
            disabled={page.loading || !shown()?.next}
            onClick={() => {
              const next = shown()?.next;
              if (next) {
                setCursors([...cursors(), next]);
              }
            }}
          >
            Older
            <Icon name="chevronRight" size={13} />
          </button>
        </nav>
      </section>
      <AuditDetail row={selected()} onClose={() => setSelected(null)} />
    </>
  );
}

/**
 * The rows of one page, windowed: only the rows in view and a margin are in the DOM (spacer
 * rows stand in for the rest), so a 200-row page costs what about 60 rows cost. The columns
 * have fixed widths, so they do not move as the window does.
 */
export function AuditTable(props: { page: Page; onOpen: (row: StoredEvent) => void }): JSX.Element {
  let body: HTMLTableSectionElement | undefined;
  const rows = () => props.page.events;
  const range = createRowWindow(() => rows().length, () => body);
  const shown = () => rows().slice(range().first, range().last);
  return (
    <div class="table-wrap">
      <table class="table table-compact audit-table" aria-rowcount={rows().length + 1}>
        <colgroup>
          <col class="col-row" />
          <col class="col-time" />
          <col class="col-session" />
          <col class="col-kind" />
          <col class="col-what" />
          <col class="col-wall" />
          <col class="col-outcome" />
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Row</th>
            <th scope="col">Time</th>
            <th scope="col">Session</th>
            <th scope="col">Kind</th>
            <th scope="col">What</th>
            <th scope="col">Wall</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody
          ref={(element) => {
            body = element;
          }}
        >
          <Show when={range().first > 0}>
            <tr class="audit-spacer" aria-hidden="true">
              <td colSpan={7} style={{ height: `${range().first * ROW_HEIGHT}px` }} />
            </tr>
          </Show>
          <For each={shown()}>
            {(row, index) => {
              const summary = summarize(row);
              return (
                <tr class="audit-row" aria-rowindex={range().first + index() + 2}>
                  <td class="cell-num">
                    <button type="button" class="row-button" onClick={() => { props.onOpen(row); }}>
                      {row.seq}
                      <span class="visually-hidden"> details</span>
                    </button>
                  </td>
                  <td class="cell-nowrap">{dateTime(row.time_ms)}</td>
                  <td class="mono-small" title={row.session_id}>
                    {shortId(row.session_id)}
                  </td>
                  <td title={summary.kind}>{summary.kind}</td>
                  <td class="cell-what" title={summary.what}>
                    {summary.what}
                  </td>
                  <td>{summary.enforcement ? <EnforcementBadge level={summary.enforcement} /> : null}</td>
                  <td title={summary.outcome ?? undefined}>
                    {summary.outcome ? <Badge tone={summary.tone}>{summary.outcome}</Badge> : null}
                  </td>
                </tr>
              );
            }}
          </For>
          <Show when={range().last < rows().length}>
            <tr class="audit-spacer" aria-hidden="true">
              <td colSpan={7} style={{ height: `${(rows().length - range().last) * ROW_HEIGHT}px` }} />
            </tr>
          </Show>
        </tbody>
      </table>
    </div>
  );
}

function VerifyPanel(): JSX.Element {
  const app = useApp();
  const [report, setReport] = createSignal<VerifyReport | null>(null);
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);
  const verify = () => {
    setBusy(true);
    setProblem(null);
    verifyChain(app.api).then(
      (result) => {
        setReport(result);
        setBusy(false);
      },
      (error: unknown) => {
        setProblem(describeError(error).message);
        setBusy(false);
      },
    );
  };
  return (
    <div class="verify" aria-live="polite">
      <button type="button" class="button" disabled={busy()} onClick={verify}>
        <Icon name="shield" size={14} />
        {busy() ? "Verifying…" : "Verify the chain"}
      </button>
      <Show when={report()}>
        {(result) => (
          <Show
            when={result().first_broken}
            fallback={
              <span class="status-good">
                <Icon name="check" size={13} />
                Intact: {result().rows} rows; head is row {result().head?.seq ?? 0}{" "}
                <code class="mono-small" title={result().head?.hash ?? ""}>
                  {result().head?.hash.slice(0, 16) ?? ""}…
                </code>
              </span>
            }
          >
            {(broken) => (
              <span class="status-bad" role="alert">
                <Icon name="alert" size={13} />
                Broken at row {broken().seq}: {broken().problem.replace(/_/g, " ")}
                {"detail" in broken() ? ` (${(broken() as { detail: string }).detail})` : ""}
              </span>
            )}
          </Show>
        )}
      </Show>
      <Show when={problem()}>{(text) => <span class="field-error">{text()}</span>}</Show>
    </div>
  );
}

function ExportButtons(props: { filters: AuditFilters }): JSX.Element {
  const app = useApp();
  const [problem, setProblem] = createSignal<string | null>(null);
  const [busy, setBusy] = createSignal(false);
  const download = async (format: "jsonl" | "ocsf") => {
    setBusy(true);
    setProblem(null);
    try {
      const blob = await exportAudit(app.api, props.filters, format);
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = `paddock-audit-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-")}${format === "ocsf" ? ".ocsf" : ""}.jsonl`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => { URL.revokeObjectURL(url); }, 10_000);
    } catch (error) {
      setProblem(describeError(error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="export">
      <button type="button" class="button" disabled={busy()} onClick={() => void download("jsonl")}>
        <Icon name="download" size={14} />
        Export JSONL
      </button>
      <button type="button" class="button" disabled={busy()} onClick={() => void download("ocsf")}>
        <Icon name="download" size={14} />
        Export OCSF
      </button>
      <Show when={problem()}>
        {(text) => (
          <span class="field-error" role="alert">
            {text()}
          </span>
        )}
      </Show>
    </div>
  );
}
