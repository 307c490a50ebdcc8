/** Durable Object stubs by name: one room object per room id, one gate per webhook id. */
export function roomStub(env: Env, roomId: string) {
  return env.ROOMS.getByName(roomId);
}

export function gateStub(env: Env, webhookId: string) {
  return env.WEBHOOK_GATES.getByName(webhookId);
}
