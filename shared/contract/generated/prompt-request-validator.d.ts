import type { ValidateFunction } from 'ajv';
import type { PromptRequestBody } from '../types.js';

declare const validate: ValidateFunction<PromptRequestBody>;
export { validate };
export default validate;
