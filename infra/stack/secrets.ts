import { SecretValue, Validations } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * One Secrets Manager secret holding every provider key as JSON:
 * `{"OPENAI_API_KEY": "...", "ANTHROPIC_API_KEY": "...", ...}` (the same names as the
 * local environment variables). It is created as `{}`: keys are put in after deployment
 * with `aws secretsmanager put-secret-value`, never through the template, so no key ever
 * appears in the synthesized template or in CloudFormation.
 */
export class ProviderSecret extends Construct {
  readonly secret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: 'Model provider API keys as JSON: {"OPENAI_API_KEY": "...", ...}',
      // An empty JSON object, not a secret: CloudFormation only writes it at creation.
      secretStringValue: SecretValue.unsafePlainText('{}'),
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Provider API keys are issued by the vendors (OpenAI, Anthropic, ...); no rotation Lambda can mint them. ' +
        'They are rotated by hand at the vendor and written with put-secret-value.',
    });
  }

  /**
   * Lets `grantee` read the keys: `GetSecretValue`, the one call its code makes
   * (shared/secrets/provider-keys.ts). Not `Secret.grantRead`, which adds `DescribeSecret`
   * (the secret's metadata, rotation settings and versions) that nothing here reads. The
   * secret is encrypted with the account's AWS managed key, whose policy lets any principal
   * of the account decrypt through Secrets Manager: no KMS grant is needed.
   */
  grantRead(grantee: IGrantable): void {
    Grant.addToPrincipalOrResource({ grantee, actions: ['secretsmanager:GetSecretValue'], resourceArns: [this.secret.secretArn], resource: this.secret });
  }
}
