import type { ModelResult } from '../compare/result.js';

/** One judge's answer to one ordered pair, in position terms (spec 1.4: a pairwise judgement). */
export interface Verdict {
  winner: 'A' | 'B' | 'tie';
  /** 1 (very poor) to 10 (excellent). */
  scoreA: number;
  scoreB: number;
  /** Short; cut at VERDICT_LIMITS.reasoningChars. */
  reasoning: string;
}

/** Why a model or judge call failed (the `error` of a result or an evaluation). */
export type CallError = NonNullable<ModelResult['error']>;

/** One judge call's outcome: what the `judge` task answers. */
export interface Judgment {
  status: 'completed' | 'failed';
  verdict?: Verdict;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  /** USD; null when the vendor's usage was missing or inconsistent; 0 for a call that failed upstream (one whose answer held no verdict costs what it used). */
  providerCost: number | null;
  /** USD, only where providerCost is null: what the call was charged instead, estimated from its text. */
  estimatedCost?: number;
  /** The token classes its vendor reported, as a model result's (absent when its usage was missing). */
  usage?: ModelResult['usage'];
  error?: CallError;
  warnings?: string[];
}

/**
 * One judge call to make: judge `judge` (index into the request's judges) sees model `a`
 * as Answer A and model `b` as Answer B (indexes into the request's models).
 */
export interface JudgeTask {
  judge: number;
  a: number;
  b: number;
}

/** One of the two judge calls of an evaluation, as the response reports it. */
export interface EvaluationOrder {
  /** The model shown to the judge as Answer A, and as Answer B (requested IDs). */
  answerA: string;
  answerB: string;
  status: 'completed' | 'failed';
  /** The judge's verdict as it gave it, in position terms; null when the call failed. */
  verdict: Verdict | null;
  /** The verdict mapped back to a model: its ID, `tie`, or null when the call failed. */
  winner: string | null;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  providerCost: number | null;
  /** USD, only where providerCost is null: what the call was charged instead, estimated from its text. */
  estimatedCost?: number;
  /** As a model result's: the cached, cache-write and reasoning tokens its providerCost priced apart. */
  usage?: ModelResult['usage'];
  error?: CallError;
  warnings?: string[];
}

/**
 * An item of `evaluations` (spec 2.12 leaves it open): one judge's position-swapped
 * comparison of one pair of completed results.
 */
export interface Evaluation {
  judgeModelId: string;
  /** The pair, as requested; modelA comes first in `models`. */
  modelA: string;
  modelB: string;
  /** `failed` when either judge call failed: no winner is declared from one order alone. */
  status: 'completed' | 'failed';
  /** A model ID or `tie`; null when the evaluation failed. */
  winner: string | null;
  /** Whether both orders named the same winner (or both a tie); false when the evaluation failed. */
  consistent: boolean;
  /** The judge's score (1 to 10) per model ID, the mean of both orders; null when failed. */
  scores: Record<string, number> | null;
  /** judge_weights applied per model ID (see weights.ts); 4 decimals, the two adding up to 1 before rounding (the higher wins, equal ones tie); null when failed. */
  weightedScores: Record<string, number> | null;
  /** Both judge calls: modelA shown first, then modelB shown first. */
  orders: [EvaluationOrder, EvaluationOrder];
  /** The two judge calls together: tokens and cost added up, latency added up. */
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  /** USD; null when a completed call's usage was missing. */
  providerCost: number | null;
  /** USD, only where providerCost is null: what the two calls were charged together, the estimate of the one whose usage was missing counted in. */
  estimatedCost?: number;
  /** Each contestant's output: tokens as its vendor counted them, and characters. */
  lengths: Record<string, OutputLength>;
  /** Present when the judge is one of the two contestants, or of the same vendor family as one. */
  selfPreference?: SelfPreference;
  /** Whether the ranking counts this evaluation: a self-preferring one is left out where an independent judge evaluated the pair. */
  inRanking: boolean;
  error?: CallError;
}

export interface OutputLength {
  /** As the vendor counted them, less the reasoning it reported apart (evaluation.ts); null where its usage was missing or could not be true. */
  tokens: number | null;
  characters: number;
}

export interface SelfPreference {
  /** The contestant the judge is, or shares a vendor family with. */
  modelId: string;
  relation: 'same-model' | 'same-family';
}

/** An item of `ranking`: one requested model's record across all completed evaluations. */
export interface RankingEntry {
  /** 1 plus the number of models whose interval lies wholly above this one's (overlapping intervals share ranks); null for a model no counted evaluation judged. */
  rank: number | null;
  modelId: string;
  /** Bradley-Terry log strength, centred on 0 across the ranked models; null without evaluations. */
  strength: number | null;
  /** 95 % bootstrap interval of the strength; null without evaluations. */
  interval: [number, number] | null;
  /** (wins + ties / 2) / evaluations, as FastChat reports it; null without evaluations. */
  winRate: number | null;
  wins: number;
  ties: number;
  losses: number;
  evaluations: number;
}
