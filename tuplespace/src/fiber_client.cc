// FiberClient: to be written (see fiber_client.h).
