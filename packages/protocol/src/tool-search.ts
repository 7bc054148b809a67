/** Hits a tool search answers (`search_tools`, `GET /v1/toolsets/:id/search`): by default, and at most (more declarations no longer save the model reading the whole module). */
export const SEARCH_LIMIT = { default: 5, max: 50 } as const;
