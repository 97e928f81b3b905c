// A kernel that holds its stream until the host raises a flag: the benchmark
// queues many launches behind it, then releases them all at once, so the
// events around the queued launches time the device alone, with no gaps where
// the GPU waited for the host (how nvbench times calls it cannot graph-capture).
extern "C" __global__ void spla_wait_flag(const volatile int* flag, unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (*flag) return;
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < timeout_ns);  // never hang a stream: give up after the timeout
}
