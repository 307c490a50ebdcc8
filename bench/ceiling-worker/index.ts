/** Answers every request (the benchmark POSTs a webhook-sized JSON body) with a constant. */
const BODY = '{"deliveries":[{"roomId":"ceiling","messageId":"ceiling","seq":0}]}';

export default {
  async fetch(request: Request): Promise<Response> {
    // Read the body, as the real webhook does, so the request is fully received before answering.
    await request.arrayBuffer();
    return new Response(BODY, { headers: { 'Content-Type': 'application/json' } });
  },
};
