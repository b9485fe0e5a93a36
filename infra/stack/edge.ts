import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export interface GatewayEdgeProps {
  /** The stage the web ACL guards. */
  stageArn: string;
  /** The stage's throttle (requests a second, all callers together): the limits below are shares of it. */
  throttlingRateLimit: number;
}

/** A key's share of the stage's throttle, and an IP address's (every key and none behind it). */
export const EDGE_SHARES = { perKey: 0.4, perIp: 0.5 } as const;

/** The rate rules' window: WAF counts the last minute, about every 10 seconds. */
const WINDOW_SECONDS = 60;

/** The body of a request the edge refuses: the gateway's error shape, as its own 429s. */
export const EDGE_REFUSAL = JSON.stringify({
  error: { code: 'rate_limited', message: 'Too many requests from this key or address: try again in a minute' },
});

/**
 * Per tenant at the edge: a WAF web ACL on the stage whose rate rules count every request,
 * refused ones too (a bad body, a replay, a request the authorizer or the account's own
 * limit turns away), per API key (the Authorization header) and per IP address (every
 * request from it, keyed or not: tenants behind one NAT share it, docs/deployment.md), each
 * held to a share of the stage's throttle, so that no
 * one key or address can use up the throttle every tenant shares. A refused request gets the
 * gateway's 429 body with `Retry-After`. No sampled requests: they would keep the
 * Authorization header (a key) in the WAF console for hours.
 */
export class GatewayEdge extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: GatewayEdgeProps) {
    super(scope, id);
    const perMinute = props.throttlingRateLimit * WINDOW_SECONDS;
    // WAF's least limit is 10 a window.
    const limit = (share: number) => Math.max(10, Math.floor(perMinute * share));
    const refuse: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited', responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }] },
      },
    };
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({ cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: false });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Per API key and per IP address rate limits, each a share of the stage throttle',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('GatewayEdge'),
      customResponseBodies: { rateLimited: { contentType: 'APPLICATION_JSON', content: EDGE_REFUSAL } },
      rules: [
        {
          name: 'PerApiKey',
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: limit(EDGE_SHARES.perKey),
              evaluationWindowSec: WINDOW_SECONDS,
              aggregateKeyType: 'CUSTOM_KEYS',
              // The header lower-cased, so that `Bearer` and `bearer` count as one key (the
              // authorizer takes no other difference of spelling: shared/auth/keys.ts); keys that
              // differ in case alone share a bucket, which random keys never do.
              customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'LOWERCASE' }] } }],
            },
          },
          action: refuse,
          visibilityConfig: visibility('GatewayEdgePerApiKey'),
        },
        {
          name: 'PerIpAddress',
          priority: 1,
          statement: { rateBasedStatement: { limit: limit(EDGE_SHARES.perIp), evaluationWindowSec: WINDOW_SECONDS, aggregateKeyType: 'IP' } },
          action: refuse,
          visibilityConfig: visibility('GatewayEdgePerIpAddress'),
        },
      ],
    });
    new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
