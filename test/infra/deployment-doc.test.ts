import { readdirSync, readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { GatewayEdge } from '../../infra/stack/edge.js';

const STACK_DIR = new URL('../../infra/stack/', import.meta.url);
const deployment = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
/** The doc's text as one line: its paragraphs wrap anywhere. */
const flat = deployment.replace(/\s+/g, ' ');

describe('docs/deployment.md: the stack as it is', () => {
  it('names every cdk-nag rule the stack acknowledges (SMG4, the secret rotation, was missing)', () => {
    const rules = new Set<string>();
    for (const file of readdirSync(STACK_DIR).filter((name) => name.endsWith('.ts'))) {
      for (const match of readFileSync(new URL(file, STACK_DIR), 'utf8').matchAll(/id: [`'"]AwsSolutions-([A-Z]+\d+)/g)) rules.add(match[1]!);
    }
    expect([...rules]).toContain('SMG4');
    expect([...rules].filter((rule) => !new RegExp(`\\b${rule}\\b`).test(flat))).toEqual([]);
  });

  it('says the per-address WAF rule counts keyed requests too, as the template has it (no scope-down)', () => {
    const stack = new Stack(new App(), 'EdgeDoc');
    new GatewayEdge(stack, 'Edge', { stageArn: 'arn:aws:apigateway:us-east-1::/restapis/x/stages/prod', throttlingRateLimit: 50 });
    const [acl] = Object.values(Template.fromStack(stack).findResources('AWS::WAFv2::WebACL')) as { Properties: { Rules: { Name: string; Statement: any }[] } }[];
    const perIp = acl!.Properties.Rules.find((rule) => rule.Name === 'PerIpAddress')!;
    expect(perIp.Statement.RateBasedStatement).toMatchObject({ AggregateKeyType: 'IP', Limit: 1500 });
    expect(perIp.Statement.RateBasedStatement.ScopeDownStatement).toBeUndefined();
    expect(flat.includes('per IP address (keyless requests and the public page)')).toBe(false);
    expect(flat.includes('The per-address rule (`PerIpAddress`) has no scope-down: it counts every request from the address, keyed ones too')).toBe(true);
    expect(flat.includes('share its limit (1,500 a minute at the default throttle) across all their keys')).toBe(true);
  });
});
