// Files.cs: reading a whole input, with libnnn's error code for a failure.
using System;
using System.IO;

namespace Nnn
{
    static class Files
    {
        internal static byte[] ReadAll(string path)
        {
            try
            {
                return File.ReadAllBytes(path);
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException ||
                                      e is NotSupportedException || e is ArgumentException)
            {
                throw new NnnException(Status.E_IO, "cannot read " + path + ": " + e.Message);
            }
        }

        internal static byte[] ReadAll(Stream stream)
        {
            try
            {
                var m = new MemoryStream();
                stream.CopyTo(m);
                return m.ToArray();
            }
            catch (IOException e)
            {
                throw new NnnException(Status.E_IO, "cannot read the stream: " + e.Message);
            }
        }
    }
}
