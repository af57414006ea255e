// Runner.cs: running a model through libnnn (Native, Npy) for the tool's
// testee: a float32 .npy input, samples first, run in batches as `nnnkit
// run` runs it, the outputs written as .npy. Where libnnn cannot be loaded
// the tool still reads, validates and writes: `run` is then not offered.
using System;

namespace Nnn.Tool
{
    static class Runner
    {
        static bool? loads;

        /// <summary>Why libnnn did not load (after <see cref="Loads"/> said false).</summary>
        public static string Why { get; private set; } = "";

        /// <summary>Whether libnnn loads here (tried once).</summary>
        public static bool Loads()
        {
            if (loads.HasValue)
                return loads.Value;
            try
            {
                loads = Native.Version.Length > 0;
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException
                                      || e is TypeInitializationException || e is BadImageFormatException)
            {
                Why = e.Message;
                loads = false;
            }
            return loads.Value;
        }

        /// <summary>The model at <paramref name="file"/> run on every sample of the .npy
        /// <paramref name="input"/>; the outputs written to <paramref name="output"/> (NnnException
        /// with libnnn's problem otherwise).</summary>
        public static void Run(string file, string input, string output)
        {
            long[] shape, outShape;
            float[] x = Npy.Read(input, out shape);
            if (shape.Length < 1 || shape[0] < 1)
                throw new NnnException(new Problem(Status.E_INPUT_SHAPE, "", -1, input + ": shape ("
                    + string.Join(", ", shape) + "): no samples; expected an array [samples, ...] with at least one"));
            using (var model = NativeModel.Open(file))
            {
                float[] y = model.Run(x, shape, out outShape);
                Npy.Write(output, outShape, y);
            }
        }
    }
}
