'use strict';
/**
 * What the Lambda bundles use of aws-xray-sdk-core, in place of its entry (bundle.ts
 * maps the package to this file): the members Powertools' tracer reads, built from the
 * SDK's own modules, and the entry's start-up (SDK data, Lambda mode). Left out: the
 * AWS SDK v2 and v3 client patchers (with `semver` and the parameter whitelist), the
 * EC2, ECS and Elastic Beanstalk plugins, the promise patcher and SQL data; nothing in
 * the gateway calls them, and the Lambda functions used to load them at every cold start.
 * The SDK's modules are named by path: the alias in bundle.ts remaps every specifier
 * that starts with the package name, subpaths included (to paths under this file, which
 * do not exist). A build fails if npm ever nests the package elsewhere.
 */
const lib = 'aws-xray-sdk-core/dist/lib/';
const contextUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/context_utils');
const logging = require('../../node_modules/aws-xray-sdk-core/dist/lib/logger');
const segmentUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment_utils');
const capture = require('../../node_modules/aws-xray-sdk-core/dist/lib/capture');
const httpPatcher = require('../../node_modules/aws-xray-sdk-core/dist/lib/patchers/http_p');
const pkginfo = require('../../node_modules/aws-xray-sdk-core/package.json');

const UNKNOWN = 'unknown';

function notBundled(name) {
  return () => {
    throw new Error(`aws-xray-sdk-core's ${name} is not in this bundle (${lib} is bundled in part: infra/stack/xray-sdk-core-lite.cjs)`);
  };
}

module.exports = {
  setLogger: logging.setLogger,
  getLogger: logging.getLogger,
  setDaemonAddress: require('../../node_modules/aws-xray-sdk-core/dist/lib/daemon_config').setDaemonAddress,
  captureFunc: capture.captureFunc,
  captureAsyncFunc: capture.captureAsyncFunc,
  captureCallbackFunc: capture.captureCallbackFunc,
  captureHTTPs: httpPatcher.captureHTTPs,
  captureHTTPsGlobal: httpPatcher.captureHTTPsGlobal,
  captureAWS: notBundled('captureAWS'),
  captureAWSClient: notBundled('captureAWSClient'),
  captureAWSv3Client: notBundled('captureAWSv3Client'),
  getNamespace: contextUtils.getNamespace,
  resolveSegment: contextUtils.resolveSegment,
  getSegment: contextUtils.getSegment,
  setSegment: contextUtils.setSegment,
  isAutomaticMode: contextUtils.isAutomaticMode,
  setContextMissingStrategy: contextUtils.setContextMissingStrategy,
  Segment: require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment'),
  Subsegment: require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/attributes/subsegment'),
  SegmentUtils: segmentUtils,
};

// The SDK entry's start-up, as it runs it.
segmentUtils.setSDKData({
  sdk: 'X-Ray for Node.js',
  sdk_version: pkginfo.version || UNKNOWN,
  package: pkginfo.name || UNKNOWN,
});
segmentUtils.setServiceData({
  runtime: process.release?.name ? process.release.name : UNKNOWN,
  runtime_version: process.version,
  version: process.env.npm_package_version || UNKNOWN,
  name: process.env.npm_package_name || UNKNOWN,
});
if (process.env.LAMBDA_TASK_ROOT) require('../../node_modules/aws-xray-sdk-core/dist/lib/env/aws_lambda').init();
