import { MESSAGES } from '../../errors';
import { errorResponse, ValidationErrorBody } from '../../http/responses';

/** The answers several webhook routes document alike. */
export const notFound = errorResponse('No subscription of yours has this id', MESSAGES.webhookNotFound);
export const notJson = errorResponse('Content-Type is not application/json', MESSAGES.notJson);
export const invalid = (description: string) => ({
  description,
  body: ValidationErrorBody,
  example: { error: MESSAGES.validationFailed, details: [{ field: 'url', message: 'url is required' }] },
});
