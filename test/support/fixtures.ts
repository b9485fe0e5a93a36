/** Small valid attachments: real file signatures, so the content check passes. */
export const PNG_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).toString('base64');
export const PDF_BASE64 = Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n', 'latin1').toString('base64');

export function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { prompt: 'Compare these models', models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'], ...overrides };
}
