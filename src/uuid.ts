// The shape of the ids this service issues (PostgreSQL's gen_random_uuid, printed in lower case).
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
