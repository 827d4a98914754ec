export async function scanSharded() { throw new Error('not yet'); }
