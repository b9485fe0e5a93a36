import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';

/** Which local handler a Lambda task of the definition runs. */
export type TaskFunction = 'generate' | 'judge';

export interface SynthesizedWorkflow {
  /** The Amazon States Language definition, exactly as the stack deploys it, with its tokens resolved. */
  definition: Record<string, unknown>;
  /** The Lambda ARN each task names in the definition, and the local handler it stands for. */
  functions: Record<string, TaskFunction>;
}

const CDK_JSON = fileURLToPath(new URL('../../../cdk.json', import.meta.url));

/** Stand-ins for what CloudFormation fills in at deploy time. */
const PSEUDO_PARAMETERS: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '000000000000',
  'AWS::URLSuffix': 'amazonaws.com',
};

export function localFunctionArn(logicalId: string): string {
  return `arn:aws:lambda:${PSEUDO_PARAMETERS['AWS::Region']}:${PSEUDO_PARAMETERS['AWS::AccountId']}:function:${logicalId}`;
}

/**
 * The judge workflow's definition from the real stack (deployed with `integrationTimeoutSeconds`,
 * its default where not given): the GatewayStack is constructed
 * in this process (with cdk.json's feature flags, bundling skipped, as the stack test
 * does), and its state machine's DefinitionString, the value the template carries, is
 * resolved: pseudo parameters to local stand-ins, each function's `Fn::GetAtt Arn` to a
 * local ARN named after its logical ID. Nothing is written by hand, so a definition that
 * the stack breaks breaks every local run.
 */
export async function synthesizeWorkflow(integrationTimeoutSeconds?: number): Promise<SynthesizedWorkflow> {
  const { App, Duration, Stack } = await import('aws-cdk-lib');
  const { GatewayStack } = await import('../../stack/gateway-stack.js');
  const context = (JSON.parse(readFileSync(CDK_JSON, 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  // The stack's timeouts (the machine's and its tasks') follow its integration timeout, as deployed with it.
  const stack = new GatewayStack(app, 'LocalGateway', integrationTimeoutSeconds === undefined ? {} : { integrationTimeout: Duration.seconds(integrationTimeoutSeconds) });
  const cfn = stack.workflow.stateMachine.node.defaultChild as CfnElement & { definitionString?: unknown };
  const definitionString = resolveIntrinsics(stack.resolve(cfn.definitionString));
  if (typeof definitionString !== 'string') throw new Error('The state machine has no DefinitionString');
  const logicalId = (fn: { node: { defaultChild?: unknown } }) => Stack.of(stack).getLogicalId(fn.node.defaultChild as CfnElement);
  return {
    definition: JSON.parse(definitionString) as Record<string, unknown>,
    functions: {
      [localFunctionArn(logicalId(stack.workflow.generateFunction))]: 'generate',
      [localFunctionArn(logicalId(stack.workflow.judgeFunction))]: 'judge',
    },
  };
}

/** The CloudFormation intrinsics a DefinitionString uses; anything else is an error, not a guess. */
export function resolveIntrinsics(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) return value.map(resolveIntrinsics);
  const object = value as Record<string, unknown>;
  const [key, argument] = Object.entries(object)[0] ?? [];
  if (Object.keys(object).length === 1 && key !== undefined) {
    if (key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map((part) => String(resolveIntrinsics(part))).join(separator);
    }
    if (key === 'Ref') {
      const parameter = PSEUDO_PARAMETERS[argument as string];
      if (parameter === undefined) throw new Error(`Cannot resolve Ref ${String(argument)} in the workflow definition`);
      return parameter;
    }
    if (key === 'Fn::GetAtt') {
      const [logicalId, attribute] = argument as [string, string];
      if (attribute !== 'Arn') throw new Error(`Cannot resolve Fn::GetAtt ${logicalId}.${attribute} in the workflow definition`);
      return localFunctionArn(logicalId);
    }
    if (key.startsWith('Fn::')) throw new Error(`Cannot resolve ${key} in the workflow definition`);
  }
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, resolveIntrinsics(v)]));
}
