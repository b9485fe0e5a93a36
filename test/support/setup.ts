import { loadAjv } from '../../shared/contract/ajv.js';

/**
 * The gateway loads ajv when the first request with a `response_schema` arrives (the
 * handlers do it before validating); tests that call the validator directly get it here.
 */
await loadAjv();
