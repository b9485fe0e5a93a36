/**
 * Step Functions limits a state's input and output to 256 KiB. The largest state of the
 * judge workflow is the Judge map's output: the execution input (request, model list,
 * judge tasks), every Generate result and every judgment. Each part gets a fixed share;
 * what would exceed its share travels by claim check.
 *
 *   request inline           32 KiB
 *   results, all together    96 KiB   (each result: 96 KiB / n)
 *   judgments, all together  64 KiB   (each judgment: 64 KiB / judge calls)
 *   wrappers, lists, context < 40 KiB (120 judge tasks and 32 models at most)
 */
export const WORKFLOW_LIMITS = {
  stateBytes: 256 * 1024,
  requestInlineBytes: 32 * 1024,
  resultsInlineBytes: 96 * 1024,
  judgmentsInlineBytes: 64 * 1024,
  /**
   * The share of the request's time the models get when judges are asked for; judging
   * gets the rest. A model that hangs to its deadline still leaves the judges their time.
   */
  generateShare: 0.6,
} as const;
