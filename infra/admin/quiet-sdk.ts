/**
 * Imported first by the admin CLI (cli.ts), so that it runs before any module that loads the
 * AWS SDK: on Node 20 the SDK writes a NodeVersionSupportWarning to stderr when its first
 * client is made, and the CLI's stderr is to be its JSON error alone (README, "Admin CLI").
 * An operator who set the variable keeps their value.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
