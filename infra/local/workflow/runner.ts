import type { Context } from 'aws-lambda';
import { WorkflowFailedError } from '../../../shared/judging/errors.js';
import { ANSWER_GRACE_MS } from '../../../shared/judging/step-functions.js';
import { WORKFLOW_LIMITS } from '../../../shared/judging/limits.js';
import type { GenerateEvent, GenerateOutput, JudgeEvent, JudgeItemOutput, JudgingWorkflow, WorkflowInput, WorkflowOutput } from '../../../shared/judging/workflow-types.js';
import { lambdaContext } from '../lambda-events.js';
import { synthesizeWorkflow, type SynthesizedWorkflow, type TaskFunction } from './definition.js';
import { installPromiseWithResolvers } from './polyfill.js';

/** The local handlers the definition's Lambda tasks run: the `generate` and `judge` functions' own handlers. */
export interface LocalTaskHandlers {
  generate: (event: GenerateEvent, context: Context) => Promise<GenerateOutput>;
  judge: (event: JudgeEvent, context: Context) => Promise<JudgeItemOutput>;
}

export interface LocalWorkflowOptions {
  /** The definition to run; default: synthesized from the stack on first use, once per process and timeout. */
  definition?: () => Promise<SynthesizedWorkflow>;
  /**
   * The functions' timeout, as the stack deploys them for a request deadline (REQUEST_DEADLINE_MS
   * and FUNCTION_MARGIN_MS, at most 300 s): the definition's execution and task timeouts and each
   * task's Lambda context. Default: the stack's default (29 s).
   */
  functionTimeoutMs?: number;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type TaskHandler = (input: Json) => Promise<Json>;

/** The stack's definition, by integration timeout (seconds; undefined: the stack's default). */
const synthesized = new Map<number | undefined, Promise<SynthesizedWorkflow>>();

type LocalStateMachine = import('aws-local-stepfunctions').StateMachine;

/**
 * One validated StateMachine per definition: constructing one validates the definition
 * (about half a second); running it keeps no state between executions.
 */
const machines = new WeakMap<SynthesizedWorkflow, Promise<LocalStateMachine>>();

function machineFor(workflow: SynthesizedWorkflow): Promise<LocalStateMachine> {
  let machine = machines.get(workflow);
  if (!machine) {
    installPromiseWithResolvers();
    machine = import('aws-local-stepfunctions').then(({ StateMachine }) => new StateMachine(workflow.definition as never));
    machines.set(workflow, machine);
  }
  return machine;
}

/** The stack's definition, synthesized once per process and timeout (about a second) and shared by every local workflow. */
export function stackWorkflow(integrationTimeoutSeconds?: number): Promise<SynthesizedWorkflow> {
  let workflow = synthesized.get(integrationTimeoutSeconds);
  if (!workflow) {
    workflow = synthesizeWorkflow(integrationTimeoutSeconds).catch((error: unknown) => {
      synthesized.delete(integrationTimeoutSeconds);
      throw error;
    });
    synthesized.set(integrationTimeoutSeconds, workflow);
  }
  return workflow;
}

/** A state over Step Functions' payload limit; like AWS's, no Catch can take it (the execution fails). */
class DataLimitExceededError extends Error {
  override name = 'States.DataLimitExceeded';
  readonly isCatchable = false;
  readonly isRetryable = false;
}

/** An error a function threw, as the Lambda integration reports it: Error is its type, Cause the error as JSON. */
class LambdaFunctionError extends Error {
  constructor(error: unknown) {
    const errorType = error instanceof Error ? error.name : 'Error';
    super(JSON.stringify({ errorType, errorMessage: error instanceof Error ? error.message : String(error) }));
    this.name = errorType;
  }
}

/**
 * The judge workflow on this machine: the synthesized definition executed by
 * aws-local-stepfunctions, its Lambda tasks bound to the local handlers. Each task gets
 * what Lambda would (a JSON copy of its payload and a context) and answers as the
 * `lambda:invoke` integration does (`{Payload, StatusCode}`), so the definition's own
 * paths and selectors run as they do in AWS. Payloads over 256 KiB fail the execution, as
 * they would there.
 */
export function createLocalWorkflow(handlers: LocalTaskHandlers, options: LocalWorkflowOptions = {}): JudgingWorkflow {
  const { functionTimeoutMs } = options;
  const timeoutSeconds = functionTimeoutMs === undefined ? undefined : Math.ceil(functionTimeoutMs / 1_000);
  // The tasks' Lambda context: the functions' timeout as the stack deploys it, in whole seconds.
  const taskTimeoutMs = timeoutSeconds === undefined ? undefined : timeoutSeconds * 1_000;
  const definition = options.definition ?? (() => stackWorkflow(timeoutSeconds));
  return {
    async run(input: WorkflowInput, { executionName }: { executionName: string }): Promise<WorkflowOutput> {
      const workflow = await definition();
      const machine = await machineFor(workflow);
      const overrides = bindTasks(workflow, handlers, executionName, taskTimeoutMs);
      checkSize('the execution input', input as unknown as Json);
      let output: Json;
      const execution = machine.run(input as unknown as Json as never, { overrides: { taskResourceLocalHandlers: overrides } });
      // Waited for until just past the request's deadline, as the AWS client waits for
      // StartSyncExecution's answer (step-functions.ts): a task running late then fails the
      // request, its reservation released, as in AWS (it had been waited for to the function's
      // timeout, a 504 charged or not by timing).
      let late: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        late = setTimeout(
          () => {
            execution.abort();
            reject(new WorkflowFailedError('ABORTED', "the request's deadline passed before the execution ended"));
          },
          Math.max(0, input.context.deadlineAt + ANSWER_GRACE_MS - Date.now()),
        );
      });
      try {
        output = (await Promise.race([execution.result, deadline])) as Json;
      } catch (error) {
        if (error instanceof WorkflowFailedError) throw error;
        const cause = (error as { cause?: { name?: string } }).cause;
        throw new WorkflowFailedError('FAILED', cause?.name ?? (error as Error).name, { cause: error });
      } finally {
        clearTimeout(late);
        // Aborted, its result rejects with nothing waiting for it.
        execution.result.catch(() => undefined);
      }
      checkSize('the execution output', output);
      return output as unknown as WorkflowOutput;
    },
  };
}

/** A local handler for every Task state of the definition (map iterations included), or an error naming the one that has none. */
function bindTasks(workflow: SynthesizedWorkflow, handlers: LocalTaskHandlers, executionName: string, timeoutMs: number | undefined): Record<string, TaskHandler> {
  const bound: Record<string, TaskHandler> = {};
  for (const [name, state] of taskStates(workflow.definition)) {
    const resource = String(state.Resource);
    if (/^arn:[^:]+:states:::lambda:invoke$/.test(resource)) {
      bound[name] = async (input) => {
        const { FunctionName, Payload } = input as { FunctionName?: string; Payload?: Json };
        const payload = await invoke(functionOf(workflow, FunctionName, name), handlers, Payload ?? null, executionName, timeoutMs);
        return { ExecutedVersion: '$LATEST', Payload: payload, StatusCode: 200 };
      };
    } else if (/^arn:[^:]+:lambda:/.test(resource)) {
      const fn = functionOf(workflow, resource, name);
      bound[name] = (input) => invoke(fn, handlers, input, executionName, timeoutMs);
    } else {
      throw new Error(`The local workflow cannot run task "${name}": resource ${resource} is not a Lambda function`);
    }
  }
  return bound;
}

function functionOf(workflow: SynthesizedWorkflow, arn: string | undefined, state: string): TaskFunction {
  // A qualified ARN (`...:function:Name:alias`) names the same function.
  const unqualified = arn?.split(':').slice(0, 7).join(':');
  const fn = unqualified === undefined ? undefined : workflow.functions[unqualified];
  if (!fn) throw new Error(`Task "${state}" invokes ${arn ?? 'no function'}, which is neither the generate nor the judge function`);
  return fn;
}

async function invoke(fn: TaskFunction, handlers: LocalTaskHandlers, payload: Json, executionName: string, timeoutMs: number | undefined): Promise<Json> {
  checkSize(`the input of a ${fn} task`, payload);
  // Lambda hands the function a parsed copy of the JSON it was sent, and sends back JSON.
  const event = JSON.parse(JSON.stringify(payload)) as never;
  let result: unknown;
  try {
    result = await handlers[fn](event, lambdaContext(fn, `${executionName}-${fn}`, timeoutMs));
  } catch (error) {
    throw new LambdaFunctionError(error);
  }
  const json = (result === undefined ? null : JSON.parse(JSON.stringify(result))) as Json;
  checkSize(`the output of a ${fn} task`, json);
  return json;
}

function checkSize(what: string, value: Json): void {
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > WORKFLOW_LIMITS.stateBytes) {
    throw new DataLimitExceededError(`${what} is ${bytes} bytes, over Step Functions' ${WORKFLOW_LIMITS.stateBytes}`);
  }
}

/** Every Task state, by name, in the definition and the definitions nested in Map and Parallel states. */
function* taskStates(definition: Record<string, unknown>): Generator<[string, Record<string, unknown>]> {
  const states = (definition.States ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, state] of Object.entries(states)) {
    if (state.Type === 'Task') yield [name, state];
    const nested = (state.ItemProcessor ?? state.Iterator) as Record<string, unknown> | undefined;
    if (nested) yield* taskStates(nested);
    for (const branch of (state.Branches ?? []) as Record<string, unknown>[]) yield* taskStates(branch);
  }
}
