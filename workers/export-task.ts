// The piscina task that formats one page of an export (workers/work-pool.ts). The chunk goes back as UTF-8
// bytes whose buffer is transferred, not copied, to the main thread.

import { Piscina } from 'piscina';
import { formatPage, type ExportFormat, type ExportRow } from './export-format.js';

export interface FormatTask {
  format: ExportFormat;
  rows: ExportRow[];
  /** the page opens the body's rows (JSON: no leading comma) */
  first: boolean;
}

const encoder = new TextEncoder();

export default function formatTask(task: FormatTask): unknown {
  const bytes = encoder.encode(formatPage(task.format, task.rows, task.first));
  return Piscina.move(bytes);
}
