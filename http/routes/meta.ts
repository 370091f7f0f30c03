// GET /openapi.json, /metrics, /v1/meta/errors.

import { ERRORS } from '../../engine/errors.js';
import { openapiDocument } from '../openapi.js';
import type { Route, Router } from '../router.js';
import { ErrorCatalogueSchema } from '../schemas.js';
import { compile } from '../serialize.js';
import type { Services } from '../services.js';

const errorsBody = compile(ErrorCatalogueSchema)(Object.values(ERRORS));

export function metaRoutes(s: Services, router: Router): Route[] {
  let openapi: string | null = null;
  return [
    {
      method: 'GET',
      path: '/openapi.json',
      auth: 'none',
      tag: 'meta',
      summary: 'This OpenAPI 3.1 document',
      response: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } }, additionalProperties: true },
      handle: () => ({ status: 200, body: (openapi ??= JSON.stringify(openapiDocument(router.routes))) }),
    },
    {
      method: 'GET',
      path: '/metrics',
      auth: 'none',
      tag: 'meta',
      summary: 'Prometheus metrics',
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      handle: async () => ({ status: 200, body: await s.metrics.registry.metrics(), contentType: s.metrics.registry.contentType }),
    },
    {
      method: 'GET',
      path: '/v1/meta/errors',
      auth: 'none',
      tag: 'meta',
      summary: 'The error code catalogue (details_url of every error body points here)',
      response: ErrorCatalogueSchema,
      handle: () => ({ status: 200, body: errorsBody }),
    },
  ];
}
