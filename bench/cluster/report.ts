/** Per-phase throughput and latency, the fault timeline and the invariants, as Markdown. */
import type { FaultEvent } from './faults.js';
import { isFailure, isUnexpected4xx, type Invariant } from './invariants.js';
import type { RequestRecord } from './workload.js';

export interface Phase {
  name: string;
  from: number;
  to: number;
}

export interface PhaseStats extends Phase {
  requests: number;
  ok: number;
  failed: number;
  throughput: number;
  p50: number | null;
  p99: number | null;
}

/** Steady until the first fault; then per fault the fault itself (start → back) and its recovery (back → next fault); the tail. */
export function phasesOf(faults: FaultEvent[], loadEnd: number): Phase[] {
  const phases: Phase[] = [];
  const first = faults[0]?.start ?? loadEnd;
  phases.push({ name: 'steady', from: 0, to: first });
  for (const f of faults) {
    phases.push({ name: f.kind, from: f.start, to: f.back });
    phases.push({ name: `${f.kind}: recovery`, from: f.back, to: f.end });
  }
  return phases.filter((p) => p.to > p.from);
}

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null);

/** Requests are placed by the time they ended: one in flight when a fault struck counts in that fault's phase. */
export function phaseStats(records: RequestRecord[], phases: Phase[]): PhaseStats[] {
  return phases.map((p) => {
    const inPhase = records.filter((r) => r.t + r.ms >= p.from && r.t + r.ms < p.to);
    const ok = inPhase.filter((r) => r.status >= 200 && r.status <= 299);
    const lat = inPhase
      .filter((r) => r.status !== 0)
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    return {
      ...p,
      requests: inPhase.length,
      ok: ok.length,
      failed: inPhase.filter((r) => isFailure(r) || isUnexpected4xx(r)).length,
      throughput: ok.length / Math.max(0.001, (p.to - p.from) / 1000),
      p50: quantile(lat, 0.5),
      p99: quantile(lat, 0.99),
    };
  });
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export interface ReportInput {
  title: string;
  settings: Record<string, string | number>;
  environment: Record<string, string>;
  phases: PhaseStats[];
  faults: FaultEvent[];
  invariants: Invariant[];
  stats: Record<string, number>;
  opsCount: Record<string, { ok: number; failed: number }>;
}

function faultSummary(f: FaultEvent): string {
  const d = f.details;
  switch (f.kind) {
    case 'web-kill':
      return `SIGKILL ${d.replica}; restarted (ready in ${s(Number(d.startMs))}), HAProxy UP again ${s(f.marks.lbUp - f.marks.killed)} after the kill`;
    case 'worker-kill': {
      const mid = d.midBatch as { sentBeforeKill: number; pendingBeforeKill: number } | null;
      return `SIGKILL ${d.worker} ${mid ? `mid-batch (${mid.sentBeforeKill} e-mails sent, ${mid.pendingBeforeKill} pending)` : '(not mid-batch)'}; restarted in ${s(Number(d.startMs))}`;
    }
    case 'pg-restart':
      return `pg_ctl stop -m fast, 3 s down, start; /readyz 200 again after ${Object.entries((d.readyAgainAfterMs as Record<string, number>) ?? {})
        .map(([k, v]) => `${k} ${s(v)}`)
        .join(', ')}`;
    case 'redis-restart':
      return 'redis-server stopped, 1 s down, started empty; rate-limit check repeated';
    case 'crm-outage':
      return 'CRM answers 2.5 s late for 6 s, then resets every connection for 6 s, then back';
    case 'rolling-restart':
      return `SIGTERM, drain, restart web1 then web2: ${((d.steps as Array<Record<string, number>>) ?? []).map((x) => `${x.replica} out ${s(x.exited - x.sigterm)}, UP ${s(x.lbUp - x.exited)} later`).join('; ')}`;
  }
}

export function markdown(r: ReportInput): string {
  const lines: string[] = [];
  lines.push(`### ${r.title}`, '');
  lines.push(
    Object.entries(r.environment)
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ') + '.',
    '',
  );
  lines.push(
    `Settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
  );
  lines.push('| phase | from | to | requests | 2xx/s | failed | p50 ms | p99 ms |', '|---|---|---|---|---|---|---|---|');
  for (const p of r.phases) lines.push(`| ${p.name} | ${s(p.from)} | ${s(p.to)} | ${p.requests} | ${p.throughput.toFixed(1)} | ${p.failed} | ${p.p50 ?? '–'} | ${p.p99 ?? '–'} |`);
  lines.push('');
  lines.push('| fault | at | back after | failed requests | errors stopped | what happened |', '|---|---|---|---|---|---|');
  for (const f of r.faults) {
    const stopped = f.kind === 'rolling-restart' ? '–' : `${s(Number(f.details.errorsStoppedAfterBackMs ?? 0))} after back`;
    lines.push(`| ${f.kind} | ${s(f.start)} | ${s(f.back - f.start)} | ${f.details.failedRequests ?? 0} | ${stopped} | ${faultSummary(f)} |`);
  }
  lines.push('');
  lines.push(
    `Requests by kind (2xx / failed): ${Object.entries(r.opsCount)
      .map(([op, c]) => `${op} ${c.ok}/${c.failed}`)
      .join(', ')}.`,
    '',
  );
  lines.push('| invariant | result | counts |', '|---|---|---|');
  for (const i of r.invariants) lines.push(`| ${i.name} | ${i.pass ? 'pass' : '**FAIL**'} | ${i.detail.replace(/\|/g, '\\|')} |`);
  lines.push('');
  return lines.join('\n');
}
