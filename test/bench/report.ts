/** The report as a terminal table, as Markdown, and as files under bench/results/. */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './children.js';
import type { BenchReport, BenchResult, Cell, Column, TargetCheck } from './types.js';

export const RESULTS_DIR = join(ROOT, 'bench', 'results');

function cell(value: Cell | undefined, column: Column): string {
  if (value === null || value === undefined) return 'n/a';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return 'n/a';
  if (Number.isInteger(value) && column.digits === undefined) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { minimumFractionDigits: column.digits ?? 0, maximumFractionDigits: column.digits ?? 0 });
}

function verdict(target: TargetCheck): string {
  if (target.met === null) return 'not measured';
  return target.met ? 'met' : 'MISSED';
}

function number(value: number | null): string {
  return value === null || !Number.isFinite(value) ? 'n/a' : value.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

function targetLine(target: TargetCheck): string {
  return `${target.name}: ${number(target.actual)} ${target.unit} (target ${target.comparison} ${number(target.limit)} ${target.unit}): ${verdict(target)}`;
}

function textTable(result: BenchResult): string[] {
  const header = result.columns.map((c) => c.label);
  const body = result.rows.map((row) => result.columns.map((c) => cell(row[c.key], c)));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`;
  return [line(header), `  ${widths.map((w) => '-'.repeat(w)).join('  ')}`, ...body.map(line)];
}

export function formatText(report: BenchReport): string {
  const m = report.machine;
  const out = [
    '',
    `Benchmarks (${report.mode}) on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; load average ${m.loadAverageStart} -> ${m.loadAverageEnd}`,
  ];
  for (const result of report.results) {
    out.push('', `${result.title}  [${result.status}, ${(result.durationMs / 1000).toFixed(1)} s]`);
    if (result.rows.length > 0) out.push(...textTable(result));
    for (const target of result.targets) out.push(`  target  ${targetLine(target)}`);
    for (const note of result.notes) out.push(`  note    ${note}`);
  }
  out.push('', `Total ${(report.durationMs / 1000).toFixed(0)} s.`, '');
  return out.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function formatMarkdown(report: BenchReport): string {
  const m = report.machine;
  const out = [
    `# Benchmark results`,
    '',
    `\`${report.command}\` (${report.mode} run), ${report.startedAt}, ${(report.durationMs / 1000).toFixed(0)} s.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}. Load average (1 min) ${m.loadAverageStart} at the start, ${m.loadAverageEnd} at the end: other work on the machine shows up as noise.`,
  ];
  for (const result of report.results) {
    out.push('', `## ${result.title}`, '');
    if (result.status !== 'ok') out.push(`**${result.status}**`, '');
    if (result.rows.length > 0) {
      out.push(`| ${result.columns.map((c) => escapeCell(c.label)).join(' | ')} |`);
      out.push(`|${result.columns.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
      for (const row of result.rows) out.push(`| ${result.columns.map((c) => escapeCell(cell(row[c.key], c))).join(' | ')} |`);
      out.push('');
    }
    for (const target of result.targets) out.push(`- Target: ${escapeCell(targetLine(target))}`);
    for (const note of result.notes) out.push(`- ${escapeCell(note)}`);
    if (result.method) out.push(`- Method: ${escapeCell(result.method)}`);
  }
  out.push('');
  return out.join('\n');
}

function writeAtomically(file: string, content: string): void {
  writeFileSync(`${file}.tmp`, content);
  renameSync(`${file}.tmp`, file);
}

/** latest.json and latest.md, and a copy of each named by the run's date (the day's last run wins). */
export function writeReport(report: BenchReport, dir = RESULTS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const markdown = formatMarkdown(report);
  const day = report.startedAt.slice(0, 10);
  const files = [join(dir, 'latest.json'), join(dir, 'latest.md'), join(dir, `${day}.json`), join(dir, `${day}.md`)];
  writeAtomically(files[0]!, json);
  writeAtomically(files[1]!, markdown);
  writeAtomically(files[2]!, json);
  writeAtomically(files[3]!, markdown);
  return files;
}
