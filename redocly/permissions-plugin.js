// Redocly plugin: the permission an operation needs lives in one place, `x-required-permission`.
// The decorator writes it into the operation's description when the contract is bundled, so the
// Redoc reference shows it and can never disagree with what the server enforces; the rule makes
// `redocly lint` fail on a secured operation that does not declare one.

/** The line the decorator appends; test/permission-docs.test.ts checks every operation has it. */
export function requiredPermissionLine(permission) {
  return permission === 'authenticated'
    ? '**Required permission:** none; any authenticated caller.'
    : `**Required permission:** \`${permission}\``;
}

function RequiredPermissionInDescription() {
  return {
    Operation: {
      leave(operation) {
        const permission = operation['x-required-permission'];
        if (permission === undefined) return;
        const line = requiredPermissionLine(permission);
        const description = String(operation.description ?? '').trimEnd();
        if (!description.endsWith(line)) operation.description = description ? `${description}\n\n${line}\n` : `${line}\n`;
      },
    },
  };
}

function SecuredOperationDeclaresPermission() {
  return {
    Operation: {
      enter(operation, { report, location }) {
        const security = operation.security ?? [];
        if (security.length > 0 && operation['x-required-permission'] === undefined) {
          report({ message: 'A secured operation must declare x-required-permission (a permission, or "authenticated").', location: location.child('security') });
        }
      },
    },
  };
}

export default function permissionsPlugin() {
  return {
    id: 'backoffice',
    rules: { oas3: { 'secured-operation-declares-permission': SecuredOperationDeclaresPermission } },
    decorators: { oas3: { 'required-permission-in-description': RequiredPermissionInDescription } },
  };
}
