import { RemovalPolicy, Stack, Validations, type Duration } from 'aws-cdk-lib';
import {
  AccessLogField,
  type IResource,
  AccessLogFormat,
  AuthorizationType,
  type CfnRestApi,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  ResponseTransferMode,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  ResponseType,
  RestApi,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PAGE_PATHS } from '../../functions/catalog-handler.js';
import { AUTHORIZATION_PATTERN } from '../../shared/auth/keys.js';
import { API_ROUTES, WWW_AUTHENTICATE, routeMethods } from '../../shared/errors.js';

/** The routes (DESIGN.md): POST /api/v1/prompt; GET /api/v1/models and GET /api/v1/openapi.json. */
export const PROMPT_PATH = ['api', 'v1', 'prompt'] as const;
export const CATALOG_RESOURCES = ['models', 'openapi.json'] as const;
/** The comparison page's files beside GET / (the page itself is the root resource's GET). */
export const PAGE_RESOURCES = [PAGE_PATHS.script, PAGE_PATHS.markdown, PAGE_PATHS.css].map((path) => path.slice(1));

/**
 * The 405 body for any other method on the prompt path, in the handler's shape and words
 * (shared/errors.ts MethodNotAllowedError). $context.httpMethod is an upper-case token:
 * nothing in it needs JSON escaping.
 */
export function methodNotAllowedBody(allow: 'GET' | 'POST'): string {
  return `{"error":{"code":"method_not_allowed","message":"Method $context.httpMethod is not allowed; use ${allow}"}}`;
}

/**
 * Content types the 405 mock maps (a mock needs a request template to run); a body of any
 * other type gets API Gateway's 415 instead (UNSUPPORTED_MEDIA_TYPE in GATEWAY_RESPONSES:
 * only these mocks answer it). A request without a Content-Type counts as application/json.
 */
const MOCK_CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream'] as const;

/** An API Gateway template placeholder that API Gateway itself renders as a quoted, escaped JSON string. */
const ERROR_MESSAGE_STRING = '$context.error.messageString';

export interface GatewayResponseSpec {
  type: ResponseType;
  /** Omitted for DEFAULT_4XX / DEFAULT_5XX: those keep the status of the error they stand for. */
  statusCode?: string;
  code: string;
  /** Fixed text, or API Gateway's own message when undefined. */
  message?: string;
  headers?: Record<string, string>;
}

/**
 * Errors API Gateway answers itself, before or instead of the `api` function, in the
 * handler's body shape `{"error":{"code","message"}}` (shared/http/response.ts) and codes.
 */
export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  {
    type: ResponseType.UNAUTHORIZED,
    statusCode: '401',
    code: 'unauthorized',
    message: 'A valid API key is required: Authorization: Bearer <API_KEY>',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  { type: ResponseType.ACCESS_DENIED, statusCode: '403', code: 'forbidden', message: 'This API key may not call this operation' },
  {
    type: ResponseType.THROTTLED,
    statusCode: '429',
    code: 'rate_limited',
    message: 'Too many requests; retry after a short wait',
    headers: { 'Retry-After': '1' },
  },
  // A REST API answers an unknown path (or a method the path does not have) with "Missing
  // Authentication Token" 403; callers must see a plain 404.
  {
    type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    code: 'not_found',
    message: `No route for this method and path; the API is ${API_ROUTES}`,
  },
  { type: ResponseType.BAD_REQUEST_BODY, statusCode: '400', code: 'invalid_request' },
  {
    type: ResponseType.REQUEST_TOO_LARGE,
    statusCode: '413',
    code: 'payload_too_large',
    message: 'The request body exceeds the 10 MB API Gateway limit; the gateway accepts at most 5242880 bytes',
  },
  // The authorizer threw (the store throttling or unreachable, past its SDK's retries) or did
  // not answer: the key could not be checked, as the local host's 503 says it. API Gateway
  // reports an authorizer's thrown error as AuthorizerConfigurationException (the
  // configuration-error response), and one it could not use as an authorizer failure: both.
  ...[ResponseType.AUTHORIZER_CONFIGURATION_ERROR, ResponseType.AUTHORIZER_FAILURE].map((type) => ({
    type,
    statusCode: '503',
    code: 'service_unavailable',
    message: 'The API key could not be checked just now; retry shortly. Nothing ran, nothing was charged',
    headers: { 'Retry-After': '1' },
  })),
  // Only the 405 mocks answer it (a method a path does not take, with a body of a type they do
  // not map, MOCK_CONTENT_TYPES): the contract's code, and words that name the method too.
  {
    type: ResponseType.UNSUPPORTED_MEDIA_TYPE,
    statusCode: '415',
    code: 'unsupported_media_type',
    message: `Method $context.httpMethod with a body of this Content-Type is not accepted here; the API is ${API_ROUTES}, its bodies application/json`,
  },
  {
    type: ResponseType.INTEGRATION_TIMEOUT,
    statusCode: '504',
    code: 'gateway_timeout',
    message: 'The request did not complete within the integration timeout',
  },
  { type: ResponseType.DEFAULT_4XX, code: 'bad_request' },
  { type: ResponseType.DEFAULT_5XX, code: 'internal_error' },
];

/** The template body: `{"error":{"code":"…","message":"…"}}`, with API Gateway's message where none is fixed. */
export function gatewayResponseBody(spec: GatewayResponseSpec): string {
  const message = spec.message === undefined ? ERROR_MESSAGE_STRING : JSON.stringify(spec.message);
  return `{"error":{"code":${JSON.stringify(spec.code)},"message":${message}}}`;
}

/**
 * Access log fields, chosen one by one: who, what, how it ended and how long it took.
 * Never the body, a header, the authorizer's token or an API key.
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  requestId: AccessLogField.contextRequestId(),
  xrayTraceId: AccessLogField.contextXrayTraceId(),
  requestTimeEpoch: AccessLogField.contextRequestTimeEpoch(),
  ip: AccessLogField.contextIdentitySourceIp(),
  method: AccessLogField.contextHttpMethod(),
  path: AccessLogField.contextPath(),
  resourcePath: AccessLogField.contextResourcePath(),
  protocol: AccessLogField.contextProtocol(),
  tlsVersion: '$context.tlsVersion',
  status: AccessLogField.contextStatus(),
  responseLength: AccessLogField.contextResponseLength(),
  latency: AccessLogField.contextResponseLatency(),
  integrationLatency: AccessLogField.contextIntegrationLatency(),
  integrationStatus: AccessLogField.contextIntegrationStatus(),
  authorizerLatency: AccessLogField.contextAuthorizerLatency(),
  authorizerStatus: AccessLogField.contextAuthorizerStatus(),
  // The account ID the authorizer resolved (its context), not the key it was given.
  accountId: AccessLogField.contextAuthorizer('accountId'),
  errorType: AccessLogField.contextErrorResponseType(),
  errorMessage: AccessLogField.contextErrorMessage(),
  authorizerError: AccessLogField.contextAuthorizerError(),
  integrationError: AccessLogField.contextIntegrationErrorMessage(),
};

export interface GatewayApiProps {
  apiFunction: IFunction;
  /** GET /api/v1/models and GET /api/v1/openapi.json; the comparison page (GET /, /page.js, /page-markdown.js, /page.css). */
  catalogFunction: IFunction;
  authorizerFunction: IFunction;
  stageName: string;
  authorizerCacheTtl: Duration;
  integrationTimeout: Duration;
  /** STREAM transfer mode (Lambda response streaming), or the default buffered integration. */
  responseStreaming: boolean;
  throttlingRateLimit: number;
  throttlingBurstLimit: number;
  logRetention: RetentionDays;
  /** Sets the region's API Gateway CloudWatch Logs role (needed once per account and region for stage logs). */
  cloudWatchRole: boolean;
}

/**
 * The REST API (regional): POST /api/v1/prompt behind the Lambda TOKEN authorizer, stage
 * throttling, X-Ray, JSON access logs and gateway responses in the gateway's error shape.
 */
export class GatewayApi extends Construct {
  readonly restApi: RestApi;
  readonly accessLogs: LogGroup;
  /** The stage's execution logs (errors only), in the group API Gateway writes them to. */
  readonly executionLogs: LogGroup;

  constructor(scope: Construct, id: string, props: GatewayApiProps) {
    super(scope, id);

    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention });

    this.restApi = new RestApi(this, 'RestApi', {
      // The stack's name: API Gateway's metrics (the 5xx alarm's) are keyed by it, apart from any other API of the account.
      restApiName: Stack.of(this).stackName,
      description: 'Model comparison gateway: POST /api/v1/prompt, GET /api/v1/models, GET /api/v1/openapi.json, the comparison page at GET /',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      cloudWatchRole: props.cloudWatchRole,
      failOnWarnings: true,
      deployOptions: {
        stageName: props.stageName,
        tracingEnabled: true,
        throttlingRateLimit: props.throttlingRateLimit,
        throttlingBurstLimit: props.throttlingBurstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        // Execution logs for errors only, and never the request or response data.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    });
    // TLS 1.2 and 1.3 only: a Regional API's default endpoint otherwise takes TLS 1.0 and 1.1
    // (its default policy, TLS_1_0), and every request carries its caller's key. The legacy
    // policy needs no endpoint access mode (an enhanced `SecurityPolicy_…` one would).
    (this.restApi.node.defaultChild as CfnRestApi).securityPolicy = 'TLS_1_2';
    // The construct's own output of the stage URL, named after its logical ID: the stack's
    // ApiUrl says the same under the name deployment.md gives.
    this.restApi.node.tryRemoveChild('Endpoint');
    // API Gateway writes execution logs to API-Gateway-Execution-Logs_<rest API ID>/<stage>,
    // and creates that group itself, outside the stack, kept forever, unless it exists: so
    // the stack creates it, with the stack's retention, kept on removal as the function and
    // access logs are (a new API has a new ID, so a redeploy never meets the old name), and
    // the stage waits for it.
    this.executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.restApi.restApiId}/${props.stageName}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.restApi.deploymentStage.node.addDependency(this.executionLogs);

    const authorizer = new TokenAuthorizer(this, 'Authorizer', {
      handler: props.authorizerFunction,
      identitySource: IdentitySource.header('Authorization'),
      // Any other spelling is refused (401) without invoking the authorizer.
      validationRegex: AUTHORIZATION_PATTERN,
      resultsCacheTtl: props.authorizerCacheTtl,
    });

    let resource = this.restApi.root;
    for (const part of PROMPT_PATH) resource = resource.addResource(part);
    // Streamed: the api function answers, then settles and logs within the same invocation
    // (functions/stream-answer.ts). A streamed integration may also run past 29 s (up to
    // 15 min) without raising the region's integration timeout quota. Buffered (emulators
    // that cannot stream): no transfer mode, the plain `invocations` URI; the function
    // settles and logs before it answers.
    const integration = new LambdaIntegration(props.apiFunction, {
      timeout: props.integrationTimeout,
      allowTestInvoke: false,
      ...(props.responseStreaming ? { responseTransferMode: ResponseTransferMode.STREAM } : {}),
    });
    resource.addMethod('POST', integration, { authorizer, authorizationType: AuthorizationType.CUSTOM });
    this.addMethodNotAllowed(resource, 'POST');
    // The catalog and this API's document: read-only, same key, one small buffered function.
    const version = resource.parentResource as IResource;
    const catalog = new LambdaIntegration(props.catalogFunction, { allowTestInvoke: false });
    // Each GET route takes HEAD too (RFC 9110 9.1: monitors ask with it), answered by the same function without a body.
    for (const part of CATALOG_RESOURCES) {
      const route = version.addResource(part);
      for (const verb of routeMethods('GET')) route.addMethod(verb, catalog, { authorizer, authorizationType: AuthorizationType.CUSTOM });
      this.addMethodNotAllowed(route, 'GET');
    }
    // The comparison page: static files, the same for everyone, so no authorizer; the page
    // sends the key the person pastes with each API call it makes.
    const root = this.restApi.root;
    for (const route of [root, ...PAGE_RESOURCES.map((part) => root.addResource(part))]) {
      for (const verb of routeMethods('GET')) {
        const method = route.addMethod(verb, catalog, { authorizationType: AuthorizationType.NONE });
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            `${verb} of the comparison page (its HTML, script or style sheet): static files with no data, served to anyone as a ` +
            "website would be; every API call the page makes carries the person's key and passes the authorizer.",
        });
      }
      this.addMethodNotAllowed(route, 'GET');
    }

    for (const spec of GATEWAY_RESPONSES) {
      this.restApi.addGatewayResponse(spec.type.responseType, {
        type: spec.type,
        statusCode: spec.statusCode,
        responseHeaders: quoteHeaders({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...spec.headers }),
        templates: { 'application/json': gatewayResponseBody(spec) },
      });
    }

    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'The body is validated by the api handler against the one JSON Schema of the contract (ajv; the same schema ' +
        'feeds the OpenAPI document), which names every failing field by JSON pointer in the gateway error body; an ' +
        'API Gateway (draft-04) model would duplicate it with a coarser error. The only parameter, the Authorization ' +
        'header, is already required by the TOKEN authorizer (missing: 401). Sizes: API Gateway rejects bodies over ' +
        '10 MB (REQUEST_TOO_LARGE, 413), the handler those over 5 MiB.',
    });
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Callers authenticate with gateway API keys (Authorization: Bearer), checked by the Lambda TOKEN authorizer ' +
        'against their SHA-256 in DynamoDB; there are no Cognito users.',
    });
    if (props.cloudWatchRole) {
      Validations.of(this.restApi).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-level API Gateway logging role; AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS documents ' +
          'for it, and API Gateway (not our code) assumes it to write the access and error logs.',
      });
    }
  }

  /**
   * Every other method on a route (ANY; API Gateway prefers the route's own method) answers
   * 405 with `Allow` naming that method, from a mock, without the authorizer: the answer
   * is the same for everyone and runs no code. Without it API Gateway would say
   * MISSING_AUTHENTICATION_TOKEN, rendered as 404.
   */
  private addMethodNotAllowed(resource: IResource, allow: 'GET' | 'POST'): void {
    const allowed = routeMethods(allow).join(', ');
    const headers = { Allow: allowed, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };
    const method = resource.addMethod(
      'ANY',
      new MockIntegration({
        passthroughBehavior: PassthroughBehavior.NEVER,
        requestTemplates: Object.fromEntries(MOCK_CONTENT_TYPES.map((type) => [type, '{"statusCode": 405}'])),
        integrationResponses: [
          {
            statusCode: '405',
            responseParameters: Object.fromEntries(Object.entries(quoteHeaders(headers)).map(([name, value]) => [`method.response.header.${name}`, value])),
            responseTemplates: { 'application/json': methodNotAllowedBody(allow) },
          },
        ],
      }),
      {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [
          {
            statusCode: '405',
            responseParameters: Object.fromEntries(Object.keys(headers).map((name) => [`method.response.header.${name}`, true])),
          },
        ],
      },
    );
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        `The ANY method of this route is a mock that answers 405 (Allow: ${allowed}) to every method but those; it ` +
        `runs no code and reads no data, so it needs no authorizer. ${allow}, the route's operation, keeps the Lambda authorizer.`,
    });
  }
}

/** Gateway response header values are mapping expressions are mapping expressions: a static value is single-quoted. */
function quoteHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
}
