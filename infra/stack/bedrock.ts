import { Aws, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { MODELS } from '../../shared/catalog/models.js';

/** The upstream names of every catalog model on Bedrock start with this (checked at synth). */
export const NOVA_MODEL_PREFIX = 'amazon.nova-';

/**
 * What the grant names: every Nova foundation model, in any region (BEDROCK_REGION may
 * differ from the stack's, and a cross-region inference profile routes to several), and
 * the account's inference profiles of Nova (`us.amazon.nova-pro-v1:0`, ...).
 */
export const NOVA_RESOURCES = {
  foundationModels: `arn:${Aws.PARTITION}:bedrock:*::foundation-model/${NOVA_MODEL_PREFIX}*`,
  inferenceProfiles: `arn:${Aws.PARTITION}:bedrock:*:${Aws.ACCOUNT_ID}:inference-profile/*${NOVA_MODEL_PREFIX}*`,
} as const;

/** cdk-nag's rendering of NOVA_RESOURCES in an IAM5 finding ID. */
const NAG_RESOURCES = {
  foundationModels: `arn:<AWS::Partition>:bedrock:*::foundation-model/${NOVA_MODEL_PREFIX}*`,
  inferenceProfiles: `arn:<AWS::Partition>:bedrock:*:<AWS::AccountId>:inference-profile/*${NOVA_MODEL_PREFIX}*`,
} as const;

/**
 * Lets a function call the catalog's Bedrock models (Amazon Nova) through Converse, which
 * is authorized as `bedrock:InvokeModel`: on the Nova foundation models and the account's
 * Nova inference profiles, nothing else (no other model, no streaming, no management API).
 */
export function grantNovaInvoke(fn: IFunction): void {
  const outside = MODELS.filter((m) => m.provider === 'bedrock' && !m.upstreamModel.startsWith(NOVA_MODEL_PREFIX));
  if (outside.length > 0) {
    throw new Error(`grantNovaInvoke: Bedrock models outside ${NOVA_MODEL_PREFIX}*: ${outside.map((m) => m.upstreamModel).join(', ')}; widen the grant deliberately`);
  }
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [NOVA_RESOURCES.foundationModels, NOVA_RESOURCES.inferenceProfiles] }),
  );
  if (!fn.role) return;
  Validations.of(fn.role).acknowledge(
    {
      id: `AwsSolutions-IAM5[Resource::${NAG_RESOURCES.foundationModels}]`,
      reason:
        'bedrock:InvokeModel (what Converse is authorized as) on the Amazon Nova foundation models only; the region is "*" ' +
        'because BEDROCK_REGION is independent of the stack region and cross-region inference routes to several regions.',
    },
    {
      id: `AwsSolutions-IAM5[Resource::${NAG_RESOURCES.inferenceProfiles}]`,
      reason:
        'bedrock:InvokeModel on this account\'s inference profiles of Amazon Nova only (e.g. us.amazon.nova-pro-v1:0), ' +
        'in any region, so that a Nova model can be called through a cross-region inference profile.',
    },
  );
}
