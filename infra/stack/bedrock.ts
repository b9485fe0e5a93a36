import { Aws, CfnMapping, Fn, Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { NOVA_GEOGRAPHIES, novaGeography } from '../../shared/catalog/bedrock-profiles.js';
import { MODELS } from '../../shared/catalog/models.js';

/** The variable shared/config.ts reads the region of Bedrock calls from. */
export const BEDROCK_REGION_ENV = 'BEDROCK_REGION';

/** The upstream names of every catalog model on Bedrock start with this (checked at synth). */
export const NOVA_MODEL_PREFIX = 'amazon.nova-';

/** The catalog's Bedrock models (upstream IDs), each once. */
export function novaModels(): string[] {
  const bedrock = MODELS.filter((m) => m.provider === 'bedrock');
  const outside = bedrock.filter((m) => !m.upstreamModel.startsWith(NOVA_MODEL_PREFIX));
  if (outside.length > 0) {
    throw new Error(`NovaInvoke: Bedrock models outside ${NOVA_MODEL_PREFIX}*: ${outside.map((m) => m.upstreamModel).join(', ')}; add their inference profiles deliberately`);
  }
  return [...new Set(bedrock.map((m) => m.upstreamModel))].sort();
}

/**
 * Where the stack's functions call Amazon Nova: in the stack's own region, through the
 * cross-region inference profile of its geography (shared/catalog/bedrock-profiles.ts).
 * Invoking through a profile is authorized twice, on the profile in the calling region and
 * on the foundation model in the destination region the call is routed to, so a grant names
 * both and nothing else: the catalog's Nova models' profiles in this region and account,
 * and those models in the profile's destination regions. The template stays region-agnostic:
 * a mapping keyed by region picks the geography at deploy time (a region that has none
 * fails the deployment there, or the synth when the stack's region is known).
 */
export class NovaInvoke extends Construct {
  readonly profileArns: string[];
  readonly foundationModelArns: string[];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const models = novaModels();
    const { region } = Stack.of(this);
    if (!Token.isUnresolved(region) && !novaGeography(region)) {
      throw new Error(
        `Amazon Nova has no cross-region inference profile with ${region} as a source region; deploy in one of: ${NOVA_GEOGRAPHIES.flatMap((g) => g.regions).join(', ')}`,
      );
    }
    const mapping = new CfnMapping(this, 'Geographies', {
      mapping: Object.fromEntries(
        NOVA_GEOGRAPHIES.flatMap((geography) =>
          geography.regions.map((source) => [
            source,
            {
              prefix: geography.prefix,
              // Commercial regions only, all in the `aws` partition.
              foundationModels: geography.regions.flatMap((destination) => models.map((model) => `arn:aws:bedrock:${destination}::foundation-model/${model}`)).join(','),
            },
          ]),
        ),
      ),
    });
    const prefix = mapping.findInMap(Aws.REGION, 'prefix');
    this.profileArns = models.map((model) => `arn:${Aws.PARTITION}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:inference-profile/${prefix}.${model}`);
    this.foundationModelArns = Fn.split(',', mapping.findInMap(Aws.REGION, 'foundationModels'));
  }

  /**
   * Lets a function call the catalog's Nova models through Converse, which is authorized as
   * `bedrock:InvokeModel`, and with `streaming` through ConverseStream too, authorized as
   * `bedrock:InvokeModelWithResponseStream` (the api function streams a caller's event-stream
   * request): no other model, no management API. Two statements with their own Sids, so that
   * policy minimization never merges the mapped list into the other. BEDROCK_REGION tells the
   * function the region its grant is for (the stack's).
   */
  grantInvoke(fn: LambdaFunction, { streaming = false } = {}): void {
    const actions = ['bedrock:InvokeModel', ...(streaming ? ['bedrock:InvokeModelWithResponseStream'] : [])];
    fn.addEnvironment(BEDROCK_REGION_ENV, Aws.REGION);
    fn.addToRolePolicy(new PolicyStatement({ sid: 'NovaInferenceProfiles', actions, resources: this.profileArns }));
    fn.addToRolePolicy(new PolicyStatement({ sid: 'NovaFoundationModels', actions, resources: this.foundationModelArns }));
  }
}
