import { WWW_AUTHENTICATE } from '../errors.js';
import { LIMITS } from './limits.js';
import { promptRequestSchema } from './request-schema.js';

/**
 * The OpenAPI 3.1 document of the gateway, generated from the contract: the request body
 * is `promptRequestSchema` itself (the JSON Schema the validator compiles), the responses
 * are the success body (spec 2.10, 2.11; docs/reference.md "Results") and the one error body of every
 * status the gateway answers (docs/reference.md "Endpoint and errors"). Print it with
 * `npx tsx infra/openapi.ts`; the tests lint it with Redocly and validate every
 * end-to-end answer against it (test/support/openapi-validator.ts).
 */

export const OPENAPI_VERSION = '3.1.0';
export const PROMPT_OPERATION = { path: '/api/v1/prompt', method: 'post' } as const;

/** Where a component schema is referenced from inside the document. */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The request schema without its `$id` (an `$id` would reset the base URI of references inside
 * the document), with the rules the gateway checks after it that JSON Schema can say written
 * in (its own checks answer them first, in its words: naming the first of two IDs for one
 * model, a vendor spelling counted as its ID; "must contain non-whitespace text"): each model
 * and judge once, a `response_schema` whose root is an object, no empty history turn.
 */
function requestSchema(): Record<string, unknown> {
  const { $id: _id, ...schema } = structuredClone(promptRequestSchema) as unknown as Record<string, unknown>;
  type Schema = Record<string, unknown> & { properties: Record<string, Schema>; items: Schema };
  const properties = (schema as Schema).properties;
  for (const ids of ['models', 'judges']) properties[ids] = { ...properties[ids], uniqueItems: true } as Schema;
  properties.response_schema = { ...properties.response_schema, properties: { type: { const: 'object' } }, required: ['type'] } as unknown as Schema;
  (properties.history as Schema).items.properties.content!.minLength = 1;
  return schema;
}

const resultError = {
  type: 'object',
  description: "Why a model failed. `upstreamStatus` is the vendor's HTTP status, when it answered one.",
  properties: {
    code: {
      type: 'string',
      description:
        'upstream_error, upstream_rate_limited, upstream_overloaded, upstream_unreachable, upstream_malformed_response (charged where its vendor billed an answer without usable text), upstream_blocked (a safety block: charged where its vendor billed it), timeout, attachment_not_supported, provider_not_configured, internal_error; `cancelled` (a cancelled result only).',
      pattern: '^[a-z][a-z0-9_]*$',
    },
    message: { type: 'string' },
    upstreamStatus: { type: 'integer', minimum: 100, maximum: 599 },
  },
  required: ['code', 'message'],
  additionalProperties: false,
};

/** A judge call's error: a model call's codes, and its own when the judge's answer held no verdict. */
const judgeCallError = {
  ...resultError,
  properties: {
    ...resultError.properties,
    code: {
      ...resultError.properties.code,
      description: `${resultError.properties.code.description} A judge call's own: unparseable_verdict (its answer held no readable verdict; charged what it used).`,
    },
  },
};

const resultFields = {
  modelId: { type: 'string', description: 'The ID as the caller sent it (canonical or vendor spelling).' },
  tokensIn: { type: 'integer', minimum: 0, description: 'Every input token the vendor counted, cached reads and writes included.' },
  tokensOut: { type: 'integer', minimum: 0, description: 'Every output token the vendor counted, reasoning included.' },
  latencyMs: { type: 'integer', minimum: 0, description: 'Wall time of the model call, retries included.' },
  warnings: {
    type: 'array',
    items: { type: 'string' },
    description:
      'Present when something was adjusted (maxTokens clamped, output cut, usage missing or inconsistent and an estimate charged, another vendor model serving an ID the vendor does not have).',
  },
};
const resultRequired = ['modelId', 'status', 'output', 'tokensIn', 'tokensOut', 'latencyMs', 'providerCost'];

/** A model that answered: its output, and its cost (null when the vendor's usage was missing or inconsistent). */
const completedResult = {
  type: 'object',
  title: 'Completed result',
  properties: {
    ...resultFields,
    status: { const: 'completed' },
    output: { type: 'string', description: 'The generated text.' },
    providerCost: {
      type: ['number', 'null'],
      minimum: 0,
      description: "USD from catalog prices and the reported token classes; null when the vendor's usage was missing or inconsistent (spec 3, rule 3).",
    },
    estimatedCost: {
      type: 'number',
      minimum: 0,
      description:
        "USD, present only where providerCost is null: what the call was charged instead, estimated from its text (its counted input and its output's length at uncached prices, never more than the call's reservation). A warning says why.",
    },
    usage: {
      type: 'object',
      description:
        "Subsets of tokensIn and tokensOut as the vendor reported them; absent when usage was missing. No reasoningTokensOut where the vendor's answer counts thinking inside the output without reporting it apart (Anthropic and Bedrock always; Cerebras, Mistral, and a chat answer without completion_tokens_details.reasoning_tokens): tokensOut includes it.",
      properties: {
        cachedTokensIn: { type: 'integer', minimum: 0 },
        cacheWriteTokensIn: { type: 'integer', minimum: 0 },
        reasoningTokensOut: { type: 'integer', minimum: 0 },
      },
      required: ['cachedTokensIn', 'cacheWriteTokensIn'],
      additionalProperties: false,
    },
    structuredOutput: {
      description: 'With response_schema: whether the output conforms, with the parsed value when it does.',
      oneOf: [
        { type: 'object', properties: { conforms: { const: true }, value: {} }, required: ['conforms', 'value'], additionalProperties: false },
        {
          type: 'object',
          properties: { conforms: { const: false }, errors: { type: 'array', items: { type: 'string' } } },
          required: ['conforms', 'errors'],
          additionalProperties: false,
        },
      ],
    },
  },
  required: resultRequired,
  additionalProperties: false,
};

/** A model that failed: no output, and why; no cost, but for an event stream's text that went out. */
const failedResult = {
  type: 'object',
  title: 'Failed result',
  properties: {
    ...resultFields,
    status: { const: 'failed' },
    output: { const: '', description: 'Always "" for a failed result.' },
    providerCost: {
      ...completedResult.properties.providerCost,
      description:
        'A failed call costs nothing, 0, but for four that its vendor billed, each charged what it had used (the usage its vendor reported by then; null when none arrived, and estimatedCost charged instead): an event-stream call whose stream broke off (the deadline, a vendor error) after some of its text went out as deltas; a call the deadline stopped while its request was at its vendor (`timeout`); an answer its vendor withheld and billed (`upstream_blocked` with usage); an answer without usable text that its vendor billed (`upstream_malformed_response` with usage: a Gemini LANGUAGE or OTHER finish, a Bedrock malformed_model_output, a chat tool call without content).',
    },
    estimatedCost: {
      ...completedResult.properties.estimatedCost,
      description: 'Only where providerCost is null: the missing-usage estimate charged (its input and the text received).',
    },
    usage: {
      ...completedResult.properties.usage,
      description: "Where the call was charged its vendor's usage (providerCost above 0): the token classes of it, as a completed result's.",
    },
    error: resultError,
  },
  required: [...resultRequired, 'error'],
  additionalProperties: false,
};

/** A model stopped because its event-stream caller disconnected: no output, but charged what it used, as a completed one is. */
const cancelledResult = {
  ...failedResult,
  title: 'Cancelled result',
  properties: {
    ...failedResult.properties,
    status: { const: 'cancelled' },
    output: { const: '', description: 'Always "" for a cancelled result (the caller had the text as deltas).' },
    providerCost: {
      ...completedResult.properties.providerCost,
      description: 'What the call had used when it was stopped, from the usage its vendor reported by then; null when none arrived; 0 when no attempt of it was at the vendor.',
    },
    error: { ...resultError, properties: { ...resultError.properties, code: { const: 'cancelled' } } },
  },
};

const modelResult = {
  description:
    'One entry of `results` (spec 2.11): one per requested model, in request order; `status` is `completed`, `failed`, or `cancelled` (stopped because its event-stream caller disconnected: charged what it used).',
  oneOf: [ref('CompletedResult'), ref('FailedResult'), ref('CancelledResult')],
};

/** A judge's verdict on one order, in position terms, as the judge gave it: what judges are asked for (shared/judging/verdict.ts VERDICT_SCHEMA, which a test holds it to). */
const score = (answer: string) => ({ type: 'integer', minimum: 1, maximum: 10, description: `Score of Answer ${answer}.` });
const verdict = {
  type: 'object',
  description: "The judge's verdict as it gave it, in position terms (A and B as it was shown them); null when the call failed.",
  properties: {
    reasoning: { type: 'string', description: 'A short comparison of the two answers.' },
    scoreA: score('A'),
    scoreB: score('B'),
    winner: { type: 'string', enum: ['A', 'B', 'tie'], description: 'The better answer, or tie.' },
  },
  required: ['reasoning', 'scoreA', 'scoreB', 'winner'],
  additionalProperties: false,
};

const judgeCallCost = {
  providerCost: completedResult.properties.providerCost,
  estimatedCost: completedResult.properties.estimatedCost,
};

/** One of an evaluation's two judge calls: who was shown as A and B, the verdict, and what the call used, as a model result's. */
const evaluationOrder = {
  type: 'object',
  properties: {
    answerA: { type: 'string', description: 'The model shown to the judge as Answer A (requested ID).' },
    answerB: { type: 'string', description: 'The model shown as Answer B.' },
    status: { enum: ['completed', 'failed'] },
    verdict: { oneOf: [verdict, { type: 'null' }] },
    winner: { type: ['string', 'null'], description: 'The verdict mapped back to a model: its ID, `tie`, or null when the call failed.' },
    tokensIn: resultFields.tokensIn,
    tokensOut: resultFields.tokensOut,
    latencyMs: resultFields.latencyMs,
    ...judgeCallCost,
    usage: completedResult.properties.usage,
    error: judgeCallError,
    warnings: resultFields.warnings,
  },
  required: ['answerA', 'answerB', 'status', 'verdict', 'winner', 'tokensIn', 'tokensOut', 'latencyMs', 'providerCost'],
  additionalProperties: false,
};

/** A score per model ID (the pair's two), or null when the evaluation failed. */
const pairScores = (description: string, value: Record<string, unknown>) => ({
  type: ['object', 'null'],
  description,
  additionalProperties: value,
  minProperties: 2,
  maxProperties: 2,
});

const evaluation = {
  type: 'object',
  description:
    "One judge's position-swapped comparison of one pair of completed results (spec 2.12): both orders in `orders`, the winner (a model ID, `tie`, or null when the evaluation failed) and whether both orders agreed.",
  properties: {
    judgeModelId: { type: 'string' },
    modelA: { type: 'string', description: 'Requested IDs; modelA comes first in `models`.' },
    modelB: { type: 'string' },
    status: { enum: ['completed', 'failed'], description: '`failed` when either judge call failed: no winner is declared from one order alone.' },
    error: { ...judgeCallError, description: "Why the evaluation failed: the failed judge call's error." },
    winner: { type: ['string', 'null'] },
    consistent: { type: 'boolean', description: 'Whether both orders named the same winner (or both a tie); false when the evaluation failed.' },
    scores: pairScores("The judge's score (1 to 10) per model ID, the mean of both orders; null when the evaluation failed.", {
      type: 'number',
      minimum: 1,
      maximum: 10,
    }),
    weightedScores: pairScores(
      'judge_weights applied per model ID: 4 decimals, the two adding up to 1 before rounding (the higher wins, equal ones tie); null when the evaluation failed.',
      { type: 'number', minimum: 0, maximum: 1 },
    ),
    orders: { type: 'array', minItems: 2, maxItems: 2, items: ref('EvaluationOrder'), description: 'Both judge calls: modelA shown first, then modelB shown first.' },
    tokensIn: { ...resultFields.tokensIn, description: 'Both judge calls added up.' },
    tokensOut: { ...resultFields.tokensOut, description: 'Both judge calls added up.' },
    latencyMs: { ...resultFields.latencyMs, description: 'Both judge calls added up.' },
    providerCost: { type: ['number', 'null'], minimum: 0, description: "USD, both judge calls; null when a completed call's usage was missing." },
    estimatedCost: {
      type: 'number',
      minimum: 0,
      description:
        "USD, present only where providerCost is null: what the two judge calls were charged together, the estimate of the one whose vendor's usage was missing counted in.",
    },
    lengths: {
      type: 'object',
      description:
        "Both contestants' outputs by model ID, as the judges read them: tokens as the vendor counted them, less the reasoning tokens it reported apart (reasoningTokensOut; where a vendor counts thinking inside the output and never apart, they include it; null where its usage was missing or could not be true), and characters.",
      additionalProperties: {
        type: 'object',
        properties: { tokens: { type: ['integer', 'null'], minimum: 0 }, characters: { type: 'integer', minimum: 0 } },
        required: ['tokens', 'characters'],
        additionalProperties: false,
      },
    },
    selfPreference: {
      type: 'object',
      description: 'Present when the judge is one of the two contestants (`same-model`) or of the same vendor family as one (`same-family`).',
      properties: { modelId: { type: 'string' }, relation: { enum: ['same-model', 'same-family'] } },
      required: ['modelId', 'relation'],
      additionalProperties: false,
    },
    inRanking: {
      type: 'boolean',
      description:
        'Whether the ranking counts this evaluation: one that completed with a winner, but a self-preferring one is left out wherever an independent judge evaluated the same pair; a failed one never counts.',
    },
  },
  required: [
    'judgeModelId',
    'modelA',
    'modelB',
    'status',
    'winner',
    'consistent',
    'scores',
    'weightedScores',
    'orders',
    'tokensIn',
    'tokensOut',
    'latencyMs',
    'providerCost',
    'lengths',
    'inRanking',
  ],
  additionalProperties: false,
};

const prices = {
  type: 'object',
  description: 'USD per million tokens, as the vendor listed them on `takenOn`; null where the model has no such price.',
  properties: {
    input: { type: 'number', minimum: 0 },
    cachedInput: { type: ['number', 'null'], minimum: 0 },
    cacheWrite: { type: ['number', 'null'], minimum: 0 },
    output: { type: 'number', minimum: 0 },
    longContext: { type: 'object', description: 'Rates for all tokens of a request whose input is above `aboveInputTokens`.' },
    offPeak: { type: 'object', description: 'Where the vendor prices by the time of day: peak hours (UTC) and the off-peak factor.' },
    searchQueryUsd: {
      type: 'number',
      minimum: 0,
      description: 'USD a search query of its search grounding costs, on top of the tokens, where the vendor bills it per query (Gemini 3).',
    },
    takenOn: { type: 'string', format: 'date' },
  },
  required: ['input', 'cachedInput', 'cacheWrite', 'output', 'takenOn'],
};

const modelList = {
  type: 'object',
  properties: {
    models: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'The canonical ID, as the contract spells it.' },
          alias: { type: ['string', 'null'], description: 'The same model under its vendor spelling; a result echoes whichever ID was sent.' },
          provider: { type: 'string' },
          protocol: { type: 'string' },
          upstreamModel: { type: 'string', description: 'The model name the vendor is called with.' },
          tier: { enum: ['flagship', 'fast', 'legacy', 'other'] },
          capabilities: {
            type: 'object',
            properties: {
              attachments: { type: 'array', items: { type: 'string' } },
              structuredOutput: { enum: ['native', 'tool', 'instruction'] },
              tuning: {
                type: 'object',
                description: '`model_tuning` parameters it takes: `thinkingBudget` {min, max, disable: 0}, `reasoningEffort` (its values), `webSearch`, `cachedContent`.',
              },
              cache: {
                type: 'object',
                properties: { mode: { enum: ['automatic', 'explicit', 'none'] }, minTokens: { type: ['integer', 'null'] } },
                required: ['mode', 'minTokens'],
              },
            },
            required: ['attachments', 'structuredOutput', 'tuning', 'cache'],
          },
          prices,
          maxOutputTokens: { type: 'integer', minimum: 1 },
          defaultMaxTokens: { type: 'integer', minimum: 1, description: 'The output limit when the request gives no `maxTokens`.' },
          contextWindow: { type: 'integer', minimum: 1 },
          notes: {
            type: 'array',
            items: { type: 'string' },
            description:
              'Such as another vendor model serving this ID, the day its vendor shuts its model down and which model answers it from then on, or a setting the contract lists that its vendor refuses.',
          },
        },
        required: ['id', 'alias', 'provider', 'protocol', 'upstreamModel', 'tier', 'capabilities', 'prices', 'maxOutputTokens', 'defaultMaxTokens', 'contextWindow', 'notes'],
      },
    },
  },
  required: ['models'],
  additionalProperties: false,
};

const share = { type: ['number', 'null'], minimum: 0, maximum: 1 };
const kappa = { type: ['number', 'null'], minimum: -1, maximum: 1 };

const judgeStatistics = {
  type: 'object',
  description: 'How each judge behaved and how far the judges agree (docs/judging.md). Shares are null where nothing was there to count.',
  properties: {
    judges: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          judgeModelId: { type: 'string' },
          pairs: { type: 'integer', minimum: 0, description: 'Pairs whose two orders both completed.' },
          positionConsistency: { ...share, description: 'Share of those pairs whose two orders named the same winner (or both a tie).' },
          calls: { type: 'integer', minimum: 0, description: 'Completed judge calls.' },
          chosePositionA: { ...share, description: 'Share of completed calls whose verdict chose the answer shown first.' },
          decisive: { ...share, description: 'Share of completed calls that named a winner rather than a tie.' },
          longerWon: { ...share, description: 'Among decisive calls between answers of different lengths, the share the longer answer won.' },
        },
        required: ['judgeModelId', 'pairs', 'positionConsistency', 'calls', 'chosePositionA', 'decisive', 'longerWon'],
        additionalProperties: false,
      },
    },
    agreement: {
      type: 'object',
      description: 'With two judges or more.',
      properties: {
        judgePairs: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              judges: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 },
              pairs: { type: 'integer', minimum: 0 },
              agreement: { ...share, description: 'Share of the pairs both judged with the same final verdict.' },
              cohensKappa: kappa,
            },
            required: ['judges', 'pairs', 'agreement', 'cohensKappa'],
            additionalProperties: false,
          },
        },
        fleissKappa: { ...kappa, description: 'Over the pairs every judge evaluated, with three judges or more.' },
        fleissPairs: { type: 'integer', minimum: 0 },
      },
      required: ['judgePairs', 'fleissKappa', 'fleissPairs'],
      additionalProperties: false,
    },
  },
  required: ['judges'],
  additionalProperties: false,
};

const rankingEntry = {
  type: 'object',
  description:
    "One requested model's record across the evaluations the ranking counts: a Bradley-Terry strength with its 95 % bootstrap interval; rank 1 plus the number of models linked to it by evaluations (even through others) whose interval lies wholly above (overlapping intervals share ranks; models nothing links are not ranked against each other); null when no counted evaluation judged it.",
  properties: {
    modelId: { type: 'string' },
    rank: { type: ['integer', 'null'], minimum: 1 },
    strength: { type: ['number', 'null'], description: 'Log strength, centred on 0 across the models linked to it by evaluations.' },
    interval: {
      type: ['array', 'null'],
      items: { type: 'number' },
      minItems: 2,
      maxItems: 2,
      description: '95 % interval of the strength, from a parametric bootstrap (every evaluation played again at the fitted odds) seeded by the evaluations.',
    },
    winRate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: '(wins + ties / 2) / evaluations, as FastChat reports it; null without evaluations.' },
    wins: { type: 'integer', minimum: 0 },
    ties: { type: 'integer', minimum: 0 },
    losses: { type: 'integer', minimum: 0 },
    evaluations: { type: 'integer', minimum: 0, description: 'The counted evaluations that judged it.' },
  },
  required: ['modelId', 'rank', 'strength', 'interval', 'winRate', 'wins', 'ties', 'losses', 'evaluations'],
  additionalProperties: false,
};

const promptResponse = {
  type: 'object',
  description: 'The success body (spec 2.10).',
  properties: {
    promptLogId: { type: 'string', pattern: '^pl_[0-9A-HJKMNP-TV-Z]{26}$', description: '`pl_` + a ULID: unique and time-sortable.' },
    results: { type: 'array', minItems: 1, maxItems: LIMITS.models, items: ref('ModelResult') },
    evaluations: { type: 'array', items: ref('Evaluation'), description: 'Judging results; empty without `judges`.' },
    ranking: { type: 'array', items: ref('RankingEntry'), description: 'Only when `judges` was given: the models by Bradley-Terry strength, with intervals and win rates.' },
    judgeStatistics: { ...ref('JudgeStatistics'), description: "Only when `judges` was given: each judge's behaviour and the judges' agreement." },
    creditsUsed: {
      type: 'number',
      minimum: 0,
      description:
        "Credits deducted for this request: what its calls cost, converted (the results' and judge calls' providerCost, or estimatedCost where that is null; a failed call costs 0 unless its vendor billed it: its stream had sent text, the deadline stopped it at its vendor, or its vendor withheld an answer, or gave one without usable text, that it billed), never more than the reservation.",
    },
  },
  required: ['promptLogId', 'results', 'evaluations', 'creditsUsed'],
  additionalProperties: false,
};

const fieldError = {
  type: 'object',
  properties: {
    field: { type: 'string', description: 'A JSON pointer into the request body (or `header:<name>`).' },
    message: { type: 'string' },
  },
  required: ['field', 'message'],
  additionalProperties: false,
};

/** A read-only route's HEAD: its GET's answer, a refusal's too, without the body. */
function headOf(operationId: string, what: string) {
  return {
    operationId,
    tags: ['models'],
    summary: `${what}: the GET's status and headers, without the body`,
    responses: {
      '200': { description: "The GET's headers, without its body." },
      '401': { description: "As the GET: the key missing or refused (the refusal's headers, without its body)." },
      default: { description: "As the GET's refusal, without its body." },
    },
  };
}

/** `{"error": {"code", "message", "details"?}}`, with the codes a status may carry and any top-level extras. */
function errorBody(description: string, codes: readonly string[] | undefined, extras: Record<string, unknown> = {}, requiredExtras: string[] = []) {
  return {
    type: 'object',
    description,
    properties: {
      error: {
        type: 'object',
        properties: {
          code: codes ? { enum: [...codes] } : { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
          message: { type: 'string', minLength: 1 },
          details: { type: 'array', minItems: 1, items: ref('FieldError') },
        },
        required: ['code', 'message'],
        additionalProperties: false,
      },
      ...extras,
    },
    required: ['error', ...requiredExtras],
    additionalProperties: false,
  };
}

const credits = (description: string) => ({ type: 'number', minimum: 0, description });

/** Every error status: its component name, codes, meaning, extras and headers. */
interface ErrorStatus {
  status: string;
  name: string;
  codes?: readonly string[];
  description: string;
  extras?: Record<string, unknown>;
  requiredExtras?: string[];
  headers?: Record<string, { description: string; required: boolean; schema: Record<string, unknown> }>;
}

/** On every answer of the gateway's handlers, errors included; not on those API Gateway gives itself. */
const errorRequestId = {
  description:
    "The gateway's ID of this request, where the gateway's handler answered (in AWS, not on the answers API Gateway gives itself: its gateway responses, such as the authorizer's 401 and 503, 403, an unknown path's 404, 413, its throttle's 429 and 504).",
  required: false,
  schema: { type: 'string' },
};

const retryAfter = { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } };

export const ERROR_STATUSES: readonly ErrorStatus[] = [
  {
    status: '400',
    name: 'BadRequest',
    codes: ['invalid_request', 'malformed_json', 'bad_request'],
    description:
      '`invalid_request`: the body breaks the contract; `details` lists every failing field as a JSON pointer. `malformed_json`: the body is not JSON (an empty body included). `bad_request`: the request is not valid HTTP.',
  },
  {
    status: '401',
    name: 'Unauthorized',
    codes: ['unauthorized'],
    description: '`Authorization` missing, repeated, not `Bearer <key>`, a key of the wrong shape, unknown or revoked. Checked before the body is read.',
    headers: { 'WWW-Authenticate': { description: 'The scheme to send the key in (RFC 9110).', required: true, schema: { const: WWW_AUTHENTICATE } } },
  },
  {
    status: '402',
    name: 'InsufficientCredits',
    codes: ['insufficient_credits'],
    description: 'The balance does not cover the estimate; nothing ran.',
    extras: {
      estimatedCreditsRequired: credits('The worst-case estimate of this request, in credits.'),
      balance: credits('The balance when the request was refused, in credits.'),
      estimate: {
        type: 'object',
        description:
          "What the estimate is made of: each model's call (its worst case is its whole input, `inputTokens`, its part of the credits `inputCredits`, framing beside its input a vendor's usage may count included, and the output tokens it holds, `outputTokens`: its whole output limit, reasoning included where the vendor bills it, and the 16 tokens above it a vendor's usage may count; with a Gemini `webSearch`, or a `cachedContent`, which may turn it on, the most search queries it may be charged, `searchQueries`, their part `searchCredits`) and the judge calls (each with its judge model's own output limit, and the answers it is shown as input). A lower `generation_settings.maxTokens` lowers the models' output part, and the judge calls' input; a shorter input or fewer attachments the input part; no `webSearch` the search part; fewer models or judges, or a cheaper judge, lowers the judge calls' part. `uncountedPdfs`: the PDFs whose pages could not be counted, each held at every model's whole context window.",
        properties: {
          models: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                modelId: { type: 'string' },
                credits: { type: 'number', minimum: 0 },
                inputTokens: { type: 'integer', minimum: 0 },
                cachedContentTokens: { type: 'integer', minimum: 1, description: "Held for a Gemini `cachedContent`: as many as its model's context leaves beside the input." },
                inputCredits: { type: 'number', minimum: 0, description: "The credits of the input held, a `cachedContent`'s tokens included." },
                outputTokens: { type: 'integer', minimum: 0 },
                searchQueries: { type: 'integer', minimum: 1, description: 'The most search queries the call may be charged, held for a Gemini `webSearch` (or `cachedContent`).' },
                searchCredits: { type: 'number', minimum: 0, description: 'The credits of those search queries.' },
              },
              required: ['modelId', 'credits', 'inputTokens', 'inputCredits', 'outputTokens'],
              additionalProperties: false,
            },
          },
          judgeCalls: {
            type: 'object',
            properties: { calls: { type: 'integer', minimum: 0 }, credits: { type: 'number', minimum: 0 } },
            required: ['calls', 'credits'],
            additionalProperties: false,
          },
          uncountedPdfs: { type: 'array', items: { type: 'string', description: 'A JSON pointer: `/attachments/0`.' } },
        },
        required: ['models', 'judgeCalls'],
        additionalProperties: false,
      },
    },
    requiredExtras: ['estimatedCreditsRequired', 'balance'],
  },
  { status: '403', name: 'Forbidden', codes: ['forbidden'], description: "AWS only: API Gateway refused the authorizer's decision." },
  { status: '404', name: 'NotFound', codes: ['not_found'], description: 'Any other path, other API versions included.' },
  {
    status: '405',
    name: 'MethodNotAllowed',
    codes: ['method_not_allowed'],
    description: 'Any method but POST on the prompt path.',
    headers: { Allow: { description: 'Always `POST` here.', required: true, schema: { const: 'POST' } } },
  },
  {
    status: '409',
    name: 'IdempotencyConflict',
    codes: ['idempotency_in_progress', 'response_not_retained'],
    description:
      '`idempotency_in_progress`: a request with this Idempotency-Key is still running (`Retry-After`), or ended without freeing its key (the store failing); the message says when its lease frees it at the latest. `response_not_retained`: it completed but its response was not kept (zero data retention, or too large), or is no longer there (expired); `promptLogId` names it.',
    extras: { promptLogId: { type: 'string', pattern: '^pl_[0-9A-HJKMNP-TV-Z]{26}$' } },
    headers: { 'Retry-After': { ...retryAfter, description: 'With `idempotency_in_progress`: seconds to wait before retrying.', required: false } },
  },
  { status: '413', name: 'PayloadTooLarge', codes: ['payload_too_large'], description: `Body over ${LIMITS.bodyBytes} bytes.` },
  {
    status: '415',
    name: 'UnsupportedMediaType',
    codes: ['unsupported_media_type'],
    description:
      'A Content-Type that is not JSON (`application/json`, `application/*+json`, none, and `application/x-www-form-urlencoded` are accepted), or that declares a `charset` other than `utf-8` (or `utf8`): a JSON body is UTF-8; a Content-Type sent more than once; a Content-Encoding other than `identity` (the body is never decoded).',
  },
  { status: '422', name: 'IdempotencyKeyReused', codes: ['idempotency_key_reused'], description: 'This Idempotency-Key was used with another body.' },
  {
    status: '429',
    name: 'RateLimited',
    codes: ['rate_limited'],
    description: 'Rate limit exceeded (per account, per minute; in AWS also the stage throttle). Retry after `Retry-After` seconds.',
    headers: { 'Retry-After': retryAfter },
  },
  {
    status: '417',
    name: 'ExpectationFailed',
    codes: ['bad_request'],
    description: 'An `Expect` header other than `100-continue`; nothing ran.',
  },
  {
    status: '431',
    name: 'RequestHeadersTooLarge',
    codes: ['bad_request'],
    description: "The request headers exceed the HTTP server's limit (16 KiB locally; API Gateway has its own); nothing ran.",
  },
  { status: '500', name: 'InternalError', codes: ['internal_error'], description: 'A gateway fault; nothing is charged.' },
  {
    status: '501',
    name: 'JudgingNotAvailable',
    codes: ['judging_not_available'],
    description: '`judges` was given while judging is not available; refused before any model runs.',
  },
  {
    status: '503',
    name: 'ServiceUnavailable',
    codes: ['service_unavailable'],
    description:
      "Nothing ran and nothing was charged; retry after `Retry-After` seconds. The store throttled or could not be reached, concurrent requests kept changing the account, the schema thread could not check a `response_schema`, or (the local host) it is stopping (`Retry-After: 1`); in AWS also the provider keys could not be read (by the api, or by every generate task of a judged request) or the function's configuration is invalid (`Retry-After: 5`).",
    headers: { 'Retry-After': retryAfter },
  },
  {
    status: '504',
    name: 'GatewayTimeout',
    codes: ['gateway_timeout'],
    description: "The request did not complete within API Gateway's integration timeout, or within the function's own time; what its models used may still be charged.",
  },
];

const JSON_MEDIA = 'application/json';
const EVENT_STREAM_MEDIA = 'text/event-stream';

/** The data of each Server-Sent Event of the prompt operation (docs/streaming-api.md). */
const streamEvents = {
  delta: {
    type: 'object',
    description:
      "`event: delta`: a model's text as its vendor streams it (unjudged requests). `index` is the model's position in `models`; `text` is the new text only. A model's deltas, concatenated, are its result's `output` when it completed; a result that failed or was cancelled after some text went out has `output` \"\": the deltas are all there is of it.",
    properties: { index: { type: 'integer', minimum: 0 }, modelId: { type: 'string' }, text: { type: 'string', minLength: 1 } },
    required: ['index', 'modelId', 'text'],
    additionalProperties: false,
  },
  result: {
    type: 'object',
    description:
      "`event: result`: a model's result, exactly as in `results`, when the model ends (judged requests: when the workflow returns them; replays: all at once, in order).",
    properties: { index: { type: 'integer', minimum: 0 }, result: ref('ModelResult') },
    required: ['index', 'result'],
    additionalProperties: false,
  },
  evaluation: {
    type: 'object',
    description: '`event: evaluation`: one item of `evaluations`, once judging has ended.',
    properties: { evaluation: ref('Evaluation') },
    required: ['evaluation'],
    additionalProperties: false,
  },
  ranking: {
    type: 'object',
    description: '`event: ranking`: after the evaluations: `ranking` and `judgeStatistics` as in the answer.',
    properties: { ranking: { type: 'array', items: ref('RankingEntry') }, judgeStatistics: ref('JudgeStatistics') },
    required: ['ranking', 'judgeStatistics'],
    additionalProperties: false,
  },
  error: {
    ...ref('Error'),
    description: '`event: error`: the run failed after the stream began (the error body the JSON call would have answered with a 5xx); the last event.',
  },
};

const eventStreamDescription = [
  'With `Accept: text/event-stream`: Server-Sent Events, each `event: NAME` and one `data:` line of JSON, written as they happen. Refusals (every 4xx, and 5xx before the run) stay JSON answers.',
  'Order: `delta` and `result` events as the models stream and end (unjudged); for judged requests a `result` per model when the workflow returns, then one `evaluation` each, then `ranking`; always last `done` (data: the whole PromptResponse, byte for byte the JSON answer) or `error` (data: the error body). Comment lines `: keep-alive` come after 15 s of silence.',
  'A caller who disconnects stops the model calls still running 2 s later (those that end within them complete); what they used is charged. Without response streaming (`gateway:responseStreaming=false`) the stream comes whole, as one body, when it ends.',
].join(' ');

const exampleRequest = { prompt: 'Say hello', models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'] };
const exampleResponse = {
  promptLogId: 'pl_01KAQ4J3ZQ5M6V7Y8X9W0T1S2R',
  results: [
    { modelId: 'fam_c-5.4', status: 'completed', output: 'Hello!', tokensIn: 7, tokensOut: 82, latencyMs: 55, providerCost: 0.0012475 },
    {
      modelId: 'fam_a-opus-4-6',
      status: 'failed',
      output: '',
      tokensIn: 0,
      tokensOut: 0,
      latencyMs: 612,
      providerCost: 0,
      error: { code: 'upstream_overloaded', message: 'Overloaded', upstreamStatus: 529 },
    },
  ],
  evaluations: [],
  creditsUsed: 0.12475,
};

/** The whole document, built anew on each call (callers may change their copy). */
// biome-ignore lint/suspicious/noExplicitAny: a JSON document that tests and the generator walk freely
export function openApiDocument(): Record<string, any> {
  const schemas: Record<string, unknown> = {
    PromptRequest: requestSchema(),
    PromptResponse: promptResponse,
    ModelResult: modelResult,
    CompletedResult: completedResult,
    FailedResult: failedResult,
    CancelledResult: cancelledResult,
    Evaluation: evaluation,
    EvaluationOrder: evaluationOrder,
    RankingEntry: rankingEntry,
    ModelList: modelList,
    JudgeStatistics: judgeStatistics,
    FieldError: fieldError,
    Error: errorBody('The one error body of every non-2xx answer.', undefined),
  };
  const responses: Record<string, unknown> = {};
  for (const spec of ERROR_STATUSES) {
    schemas[`${spec.name}Error`] = errorBody(spec.description, spec.codes, spec.extras, spec.requiredExtras);
    responses[spec.name] = {
      description: spec.description,
      headers: { 'x-request-id': errorRequestId, ...spec.headers },
      content: { [JSON_MEDIA]: { schema: ref(`${spec.name}Error`) } },
    };
  }
  responses.Error = {
    description: 'Any other 4xx or 5xx the HTTP layer answers (for example 431 for oversized headers), in the same body shape.',
    headers: { 'x-request-id': errorRequestId },
    content: { [JSON_MEDIA]: { schema: ref('Error') } },
  };
  const readOnly = 'Any method but GET and HEAD on a read-only route.';
  schemas.ReadMethodNotAllowedError = errorBody(readOnly, ['method_not_allowed']);
  responses.ReadMethodNotAllowed = {
    description: readOnly,
    headers: { 'x-request-id': errorRequestId, Allow: { description: 'Always `GET, HEAD` here.', required: true, schema: { const: 'GET, HEAD' } } },
    content: { [JSON_MEDIA]: { schema: ref('ReadMethodNotAllowedError') } },
  };

  const operationResponses: Record<string, unknown> = {
    '200': {
      description: 'One result per requested model, in request order. A model that fails does not fail the request.',
      headers: {
        'x-request-id': { description: "The gateway's ID of this request.", schema: { type: 'string' } },
        'Server-Timing': {
          description:
            "The time of each phase of the request in ms (W3C Server Timing), in the order they ended: `idempotency` (with an `Idempotency-Key`), `reserve` (the model calls are built while it is in flight), `keys` (in a Lambda container, the first request without judges, or the next after a failed read: the provider secret's read, beside the reserve), `models` or `judging`, then `total`, the handler's whole time up to the answer (it also covers what falls in no phase). Charging and logging follow the answer and are in none of them. An idempotent replay has `idempotency` and `total` only. An event stream's, sent as the stream starts, has the phases up to the reserve and `total` up to then.",
          schema: { type: 'string', example: 'reserve;dur=1.2, models;dur=201.7, total;dur=203.6' },
        },
        'x-accel-buffering': {
          description: 'Event streams only: `no`, so that a proxy in between (nginx) holds no event back.',
          schema: { const: 'no' },
        },
      },
      content: {
        [JSON_MEDIA]: { schema: ref('PromptResponse'), examples: { mixed: { summary: 'One model completed, one failed', value: exampleResponse } } },
        [EVENT_STREAM_MEDIA]: {
          schema: { type: 'string', description: eventStreamDescription },
          // OpenAPI 3.1 has no schema for an event stream's items: each event's data is named here.
          'x-events': {
            ...streamEvents,
            done: { ...ref('PromptResponse'), description: '`event: done`: the whole answer, byte for byte the JSON body; the last event of a good stream.' },
          },
          example:
            'event: delta\ndata: {"index":0,"modelId":"fam_c-5.4","text":"Hel"}\n\nevent: delta\ndata: {"index":0,"modelId":"fam_c-5.4","text":"lo!"}\n\n' +
            'event: result\ndata: {"index":0,"result":{"modelId":"fam_c-5.4","status":"completed","output":"Hello!","tokensIn":7,"tokensOut":3,"latencyMs":55,"providerCost":0.0000625}}\n\n' +
            'event: done\ndata: {"promptLogId":"pl_01JD0000000000000000000000","results":[{"modelId":"fam_c-5.4","status":"completed","output":"Hello!","tokensIn":7,"tokensOut":3,"latencyMs":55,"providerCost":0.0000625}],"evaluations":[],"creditsUsed":0.00625}\n\n',
        },
      },
    },
  };
  for (const spec of ERROR_STATUSES) operationResponses[spec.status] = { $ref: `#/components/responses/${spec.name}` };
  operationResponses.default = { $ref: '#/components/responses/Error' };

  return {
    openapi: OPENAPI_VERSION,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Model comparison gateway',
      version: '1.0.0',
      summary: 'One call sends a prompt to many language models and returns one result per model.',
      description:
        'POST /api/v1/prompt sends a prompt to several models at once and returns one result per model with tokens, latency and cost; callers pay in credits. ' +
        'The request schema is the contract schema the gateway validates with (shared/contract/request-schema.ts); unknown fields are rejected at every level. ' +
        'Besides `application/json`, a body sent as `application/*+json`, with no Content-Type, or as `application/x-www-form-urlencoded` (what `curl -d` sends) is read as JSON.',
    },
    servers: [
      { url: 'http://127.0.0.1:3000', description: 'npm start (the local host)' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'The deployed stack (cdk deploy)',
        variables: {
          apiId: { default: 'abc123defg', description: 'The REST API ID the stack outputs.' },
          region: { default: 'us-east-1' },
          stage: { default: 'prod' },
        },
      },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'prompt', description: 'Compare models on one prompt.' },
      { name: 'models', description: 'What the gateway can call, and this document.' },
    ],
    paths: {
      [PROMPT_OPERATION.path]: {
        [PROMPT_OPERATION.method]: {
          operationId: 'submitPrompt',
          tags: ['prompt'],
          summary: 'Send a prompt to several models',
          description:
            'Runs every requested model concurrently, each isolated (one failure never fails the others), inside the request deadline; ' +
            'charges what the calls cost (completed ones, and what stopped or broken-off streams had used). Refused requests (every 4xx) call no provider and change no balance.',
          parameters: [
            {
              name: 'Accept',
              in: 'header',
              required: false,
              description:
                '`text/event-stream` asks for the answer as Server-Sent Events (see the 200 response and docs/streaming-api.md), unless listed with `q=0` or a lower quality than `application/json` (or a range holding it: `application/*`, `*/*`); anything else, or none, for JSON.',
              schema: { type: 'string', example: 'text/event-stream' },
            },
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description:
                'Optional, 1 to 255 visible ASCII characters, scoped to the account: a retry with the same key and body (its object keys in any order, but for response_schema) gets the stored response without running or paying again, for 24 hours; 409 while the first runs, or where no response was kept (zero data retention, or one too large to keep: `response_not_retained`); 422 for another body. A request refused, or that charged nothing, frees its key.',
              schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
            },
          ],
          requestBody: {
            required: true,
            description:
              'JSON, as `application/json`; a body sent as `application/*+json`, as `application/x-www-form-urlencoded` (what `curl -d` sends) or without a Content-Type is read as JSON too. Any other type is refused (415), as is a `charset` other than UTF-8 or a `Content-Encoding` other than `identity`.',
            content: { [JSON_MEDIA]: { schema: ref('PromptRequest'), examples: { hello: { summary: 'Three models', value: exampleRequest } } } },
          },
          responses: operationResponses,
        },
      },
      '/api/v1/models': {
        get: {
          operationId: 'listModels',
          tags: ['models'],
          summary: 'Every model ID the gateway answers to',
          description:
            'Each model under its canonical ID and its vendor spelling, with its provider and wire protocol, the upstream model it calls, its capabilities (attachments, structured output, each tuning parameter with its range, cache mode and minimum), its prices per million tokens per usage class with the date they were taken, and its output limits.',
          responses: {
            '200': { description: 'The catalog.', content: { [JSON_MEDIA]: { schema: ref('ModelList') } } },
            '401': { $ref: '#/components/responses/Unauthorized' },
            '405': { $ref: '#/components/responses/ReadMethodNotAllowed' },
            default: { $ref: '#/components/responses/Error' },
          },
        },
        head: headOf('headModels', 'The catalog'),
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['models'],
          summary: 'This document',
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document of the gateway.',
              content: { [JSON_MEDIA]: { schema: { type: 'object', properties: { openapi: { type: 'string' }, paths: { type: 'object' } }, required: ['openapi', 'paths'] } } },
            },
            '401': { $ref: '#/components/responses/Unauthorized' },
            '405': { $ref: '#/components/responses/ReadMethodNotAllowed' },
            default: { $ref: '#/components/responses/Error' },
          },
        },
        head: headOf('headOpenApiDocument', 'This document'),
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The API key: `mcg_` + 43 base64url characters, as `Authorization: Bearer <key>` (scheme in any case). Only its SHA-256 and its first 8 characters are stored.',
        },
      },
      schemas,
      responses,
    },
  };
}
